import { execFileSync } from 'node:child_process';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { launchBrowser, pageFailures } from '../support/browser.ts';
import { exportSpans, trackerCall, trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// The tracker's web UI edits as a person makes them, in headless Chromium: each edit is checked in the page and in
// what the REST API answers afterwards. A trace sent over OTLP is opened from its experiment's page.

let tracker: TrackerHarness;
let server: RunningServer;
let browser: Browser;

type Json = Record<string, any>;

const call = (method: string, path: string, body?: unknown, api?: string): Promise<Json> =>
  trackerCall(server.url, method, path, body, api);

const seeded = { experimentId: '', runId: '', model: 'edit-model', traceId: '' };
const LLM_INPUTS = { messages: [{ role: 'user', content: 'how many <b>rows</b>?' }], temperature: 0.5 };
const LLM_OUTPUTS = { answer: '42 rows' };

/** A trace of two spans (agent > llm) as OpenTelemetry's SDK exports it in OTLP JSON, sent to /v1/traces. */
async function seedTrace(): Promise<string> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('svc-e2e');
  const root = tracer.startSpan('agent', {
    attributes: { 'mlflow.spanType': 'AGENT', 'mlflow.spanInputs': JSON.stringify({ question: 'how many rows?' }) },
  });
  const llm = tracer.startSpan(
    'llm',
    {
      attributes: {
        'mlflow.spanType': 'CHAT_MODEL',
        'mlflow.spanInputs': JSON.stringify(LLM_INPUTS),
        'mlflow.spanOutputs': JSON.stringify(LLM_OUTPUTS),
      },
    },
    trace.setSpan(context.active(), root),
  );
  llm.end();
  root.setStatus({ code: SpanStatusCode.OK });
  root.end();
  await exportSpans(server.url, seeded.experimentId, exporter.getFinishedSpans());
  return `tr-${root.spanContext().traceId}`;
}

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  tracker = await trackerHarness();
  server = await startServer(tracker.app, 0, '127.0.0.1');
  seeded.experimentId = (await call('POST', 'experiments/create', { name: 'ui edits' })).experiment_id;
  const { run } = await call('POST', 'runs/create', { experiment_id: seeded.experimentId, run_name: 'first' });
  seeded.runId = run.info.run_id;
  await call('POST', 'runs/set-tag', { run_id: seeded.runId, key: 'team', value: 'retention' });
  await call('POST', 'registered-models/create', { name: seeded.model });
  await call('POST', 'model-versions/create', { name: seeded.model, source: `runs:/${seeded.runId}/model`, run_id: seeded.runId });
  seeded.traceId = await seedTrace();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await tracker?.close();
});

/** Opens a view and fails on an error shown in the page or logged by it (a CSP violation among them). */
async function open(hash: string): Promise<{ page: Page; failures: string[] }> {
  const page = await browser.newPage();
  const failures = pageFailures(page);
  await page.goto(`${server.url}/${hash}`);
  await page.waitForSelector('#view[aria-busy=false]');
  expect(await page.isVisible('#error')).toBe(false);
  return { page, failures };
}

const serverRun = async () => (await call('GET', `runs/get?run_id=${seeded.runId}`)).run;
const serverTags = async () => Object.fromEntries(((await serverRun()).data.tags ?? []).map((t: Json) => [t.key, t.value]));
const tagRows = (page: Page) => page.$$eval('#tags tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset.tag));

describe('tracker UI edits', () => {
  it('renames a run with Enter, and the page and the API show the new name', async () => {
    const { page, failures } = await open(`#/runs/${seeded.runId}`);
    expect(await page.textContent('h2')).toBe('Run first');
    await page.fill('#run-name', 'second <i>try</i>');
    await page.press('#run-name', 'Enter');
    await expect.poll(() => page.textContent('h2')).toBe('Run second <i>try</i>');
    expect(await page.locator('h2 i').count()).toBe(0);
    expect((await serverRun()).info.run_name).toBe('second <i>try</i>');
    expect(failures).toEqual([]);
  });

  it('adds a tag and deletes it', async () => {
    const { page, failures } = await open(`#/runs/${seeded.runId}`);
    expect(await tagRows(page)).toEqual(['team']);
    await page.fill('#tag-key', 'stage');
    await page.fill('#tag-value', 'candidate');
    await page.press('#tag-value', 'Enter');
    await expect.poll(() => tagRows(page)).toEqual(['stage', 'team']);
    expect(await page.textContent('#tags tr[data-tag=stage] td')).toBe('candidate');
    expect(await serverTags()).toMatchObject({ stage: 'candidate', team: 'retention' });

    await page.getByRole('button', { name: 'Delete tag stage' }).click();
    await expect.poll(() => tagRows(page)).toEqual(['team']);
    const tags = await serverTags();
    expect(tags).not.toHaveProperty('stage');
    expect(tags.team).toBe('retention');
    expect(failures).toEqual([]);
  });

  it('saves a note with Ctrl+Enter and shows it as text with its line breaks, never as markup', async () => {
    const { page, failures } = await open(`#/runs/${seeded.runId}`);
    expect(await page.textContent('#note')).toBe('No note.');
    const note = 'First line\nSecond line: <b>x</b>';
    await page.fill('#note-text', note);
    await page.press('#note-text', 'Control+Enter');
    await expect.poll(() => page.textContent('#note')).toBe(note);
    expect(await page.locator('#note b').count()).toBe(0);
    expect(await page.innerText('#note')).toBe(note); // the rendered text keeps the line break
    expect(await page.inputValue('#note-text')).toBe(note);
    expect((await serverTags())['mlflow.note.content']).toBe(note);

    // saving again replaces it
    await page.fill('#note-text', 'Replaced');
    await page.click('#edit-note button[type=submit]');
    await expect.poll(() => page.textContent('#note')).toBe('Replaced');
    expect((await serverTags())['mlflow.note.content']).toBe('Replaced');
    expect(failures).toEqual([]);
  });

  it('sets an alias on a model version and removes it; a refused alias is said in the page', async () => {
    const { page, failures } = await open(`#/models/${seeded.model}`);
    const aliases = () => page.textContent('#versions tr[data-version="1"] [data-column=aliases]');
    expect(await aliases()).toBe('');
    await page.getByLabel('Alias for version 1').fill('champion');
    await page.getByLabel('Alias for version 1').press('Enter');
    await expect.poll(aliases).toBe('@champion');
    const byAlias = await call('GET', `registered-models/alias?name=${seeded.model}&alias=champion`);
    expect(byAlias.model_version.version).toBe('1');

    await page.getByRole('button', { name: 'Remove @champion from version 1' }).click();
    await expect.poll(aliases).toBe('');
    expect((await call('GET', `registered-models/get?name=${seeded.model}`)).registered_model.aliases ?? []).toEqual([]);

    // MLflow reserves "latest": the server refuses it and the page says so
    await page.getByLabel('Alias for version 1').fill('latest');
    await page.getByRole('button', { name: 'Set alias' }).click();
    await expect.poll(() => page.textContent('#error')).toMatch(/INVALID_PARAMETER_VALUE/);
    expect(await page.isVisible('#error')).toBe(true);
    expect((await call('GET', `registered-models/get?name=${seeded.model}`)).registered_model.aliases ?? []).toEqual([]);
    expect(failures).toEqual([]);
  });

  it("opens a trace from its experiment's page and reads a span's inputs and outputs", async () => {
    await call(
      'POST',
      `traces/${seeded.traceId}/assessments`,
      {
        assessment: {
          assessment_name: 'correct',
          trace_id: seeded.traceId,
          source: { source_type: 'HUMAN', source_id: 'reviewer' },
          feedback: { value: true },
          rationale: 'matches the table',
        },
      },
      'api/3.0/mlflow',
    );
    const { page, failures } = await open(`#/experiments/${seeded.experimentId}`);
    const row = page.locator(`#traces tr[data-trace-id="${seeded.traceId}"]`);
    expect(await row.locator('[data-column=state]').textContent()).toBe('OK');
    expect(await row.textContent()).toContain('how many rows?');
    await row.getByRole('link').click();
    await page.waitForSelector('#span-detail h3');
    expect(await page.textContent('h2')).toBe(`Trace ${seeded.traceId}`);

    // the tree: llm under agent; the root is selected first
    const tree = await page.$$eval('#view ul.span-tree button.span .span-name', (names) =>
      names.map((n) => [n.textContent, n.closest('ul')?.parentElement?.closest('li')?.querySelector('.span-name')?.textContent ?? null]),
    );
    expect(tree).toEqual([
      ['agent', null],
      ['llm', 'agent'],
    ]);
    expect(await page.textContent('#span-name')).toBe('agent');
    expect(JSON.parse((await page.textContent('#span-inputs'))!)).toEqual({ question: 'how many rows?' });

    await page.getByRole('button', { name: /^llm/ }).click();
    await expect.poll(() => page.textContent('#span-name')).toBe('llm');
    expect(await page.textContent('#span-detail dd')).toBe('CHAT_MODEL');
    expect(await page.textContent('#span-inputs')).toBe(JSON.stringify(LLM_INPUTS, null, 2));
    expect(await page.locator('#span-inputs b').count()).toBe(0);
    expect(await page.textContent('#span-outputs')).toBe(JSON.stringify(LLM_OUTPUTS, null, 2));

    const assessment = await page.$$eval('#assessments tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    expect(assessment).toEqual([['correct', 'feedback', 'true', 'HUMAN reviewer', 'matches the table']]);
    const stored = await call('GET', `traces/get?trace_id=${seeded.traceId}`, undefined, 'api/3.0/mlflow');
    expect(stored.trace.spans.map((s: Json) => s.name).sort()).toEqual(['agent', 'llm']);
    expect(failures).toEqual([]);
  });
});
