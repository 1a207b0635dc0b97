import { execFileSync } from 'node:child_process';
import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { REQUEST_ID_ATTRIBUTE } from '../../src/platform/tracing.ts';
import { createExploreApp } from '../../src/explore/service.ts';
import { createRetrievalApp } from '../../src/retrieval/service.ts';
import { checkedPages, launchBrowser, signIn } from '../support/browser.ts';
import { exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';
import { exportSpans, trackerCall, trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// Links into the tracker's UI, in headless Chromium: a request id opens the trace whose client_request_id it is (as
// the platform's traces keep the X-Request-Id their request was answered with), the retrieval console links an
// answer to it while tracing is on and not otherwise (explore's console a question likewise), and a registered model's
// tags are set and deleted on its page.

let tracker: TrackerHarness;
let trackerServer: RunningServer;
let db: Database;
let retrieval: RetrievalHarness;
let traced: RunningServer;
let untraced: RunningServer;
let gw: ScriptedGateway;
let explore: ExploreHarness;
let exploreTraced: RunningServer;
let browser: Browser;
let experimentId = '';

type Json = Record<string, any>;
const call = (method: string, path: string, body?: unknown, api?: string): Promise<Json> =>
  trackerCall(trackerServer.url, method, path, body, api);

/**
 * A trace of a request as the platform exports it over OTLP: a root span carrying the request's id (svc.request_id)
 * with one step under it. Answers the trace's id.
 */
async function exportRequestTrace(requestId: string, question: string): Promise<string> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('retrieval');
  const root = tracer.startSpan('retrieval.answer', {
    attributes: { [REQUEST_ID_ATTRIBUTE]: requestId, 'mlflow.spanType': 'CHAIN', 'mlflow.spanInputs': JSON.stringify({ question }) },
  });
  tracer.startSpan('retrieval.rank', { attributes: { 'mlflow.spanType': 'RETRIEVER' } }, trace.setSpan(context.active(), root)).end();
  root.end();
  await exportSpans(trackerServer.url, experimentId, exporter.getFinishedSpans());
  return `tr-${root.spanContext().traceId}`;
}

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  tracker = await trackerHarness();
  trackerServer = await startServer(tracker.app, 0, '127.0.0.1');
  experimentId = (await call('POST', 'experiments/create', { name: 'platform traces' })).experiment_id;
  // another experiment, so a search over every experiment has more than one to look in
  await call('POST', 'experiments/create', { name: 'notebooks' });
  await call('POST', 'registered-models/create', { name: 'ranker', tags: [{ key: 'team', value: 'search' }] });

  db = await openPglite({});
  retrieval = await retrievalHarness(db, { env: { SVC_CHUNK_SIZE_TOKENS: '40', SVC_CHUNK_OVERLAP_TOKENS: '8' } });
  await retrieval.json('POST', '/collections', who.engineer, { slug: 'bells', name: 'Bells', allowed_roles: [] });
  const bell = new TextEncoder().encode('The bell in the tower rings at noon every day.\n');
  await retrieval.upload('bells', who.engineer, { name: 'bell.md', bytes: bell, type: 'text/markdown' });
  // the same service twice: with tracing on and the tracker's address known (what traceLinks() gives), and without
  traced = await startServer(
    createRetrievalApp(retrieval.deps, { traceLinks: { trackerUrl: `${trackerServer.url}/`, experimentId } }),
    0,
    '127.0.0.1',
  );
  untraced = await startServer(createRetrievalApp(retrieval.deps), 0, '127.0.0.1');

  gw = await startScriptedGateway({ models: ['svc-chat'], chat: () => 'Regions.\n```sql\nSELECT r_name FROM tpch.tiny.region\n```' });
  explore = await exploreHarness({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat' });
  exploreTraced = await startServer(
    createExploreApp(explore.deps, { traceLinks: { trackerUrl: trackerServer.url, experimentId } }),
    0,
    '127.0.0.1',
  );
  browser = await launchBrowser();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await traced?.close();
  await exploreTraced?.close();
  await explore?.close();
  await gw?.close();
  await untraced?.close();
  await trackerServer?.close();
  await retrieval?.close();
  await db?.close();
  await tracker?.close();
});

// Every page a test opens must run without an error or a Content-Security-Policy violation.
const newPage = checkedPages(() => browser);

/** Opens a tracker view and waits until it is shown, with no error in the page's alert. */
async function openTracker(hash: string): Promise<Page> {
  const page = await newPage();
  await page.goto(`${trackerServer.url}/${hash}`);
  await page.waitForSelector('#view[aria-busy=false]');
  expect(await page.isVisible('#error'), (await page.textContent('#error')) ?? '').toBe(false);
  return page;
}

const traceHash = (id: string) => `#/traces/${id}`;

describe('a request id opens its trace', () => {
  it('lands on the trace whose client_request_id is the request id, in the experiment named or in any', async () => {
    const traceId = await exportRequestTrace('req-bells-1', 'when does the bell ring?');
    const stored = await call('GET', `traces/${traceId}`, undefined, 'api/3.0/mlflow');
    expect(stored.trace.trace_info.client_request_id).toBe('req-bells-1');

    for (const query of [`request_id=req-bells-1&experiment_id=${experimentId}`, 'request_id=req-bells-1']) {
      const page = await openTracker(`#/traces?${query}`);
      expect(await page.textContent('h2')).toBe(`Trace ${traceId}`);
      await page.waitForSelector('#span-detail h3');
      expect(await page.textContent('#span-name')).toBe('retrieval.answer');
      // the page now stands at the trace's own address
      expect(await page.evaluate(() => location.hash)).toBe(traceHash(traceId));
    }
  });

  it('says when the trace is not there yet, and finds it on looking again once it is exported', async () => {
    const page = await openTracker(`#/traces?request_id=req-later&experiment_id=${experimentId}`);
    expect(await page.textContent('#trace-missing')).toContain('No trace of request req-later yet');
    const traceId = await exportRequestTrace('req-later', 'and at night?');
    await page.getByRole('button', { name: 'Look again' }).click();
    await expect.poll(() => page.textContent('h2')).toBe(`Trace ${traceId}`);
    expect(await page.evaluate(() => location.hash)).toBe(traceHash(traceId));
  });
});

describe("the retrieval console's link to an answer's trace", () => {
  /** Asks for an answer in the console; answers the page and the request id the answer came with. */
  async function answerIn(url: string): Promise<{ page: Page; requestId: string }> {
    const page = await newPage();
    await page.goto(url);
    await signIn(page, who.engineer.user, who.engineer.roles);
    await page.click('#collections li[data-slug="bells"]');
    await expect.poll(() => page.textContent('#d-title')).toContain('bells');
    await page.fill('#question', 'When does the bell ring?');
    const answered = page.waitForResponse((r) => r.url().endsWith('/collections/bells/answer'));
    await page.click('#answer-btn');
    const requestId = (await (await answered).headerValue('x-request-id')) ?? '';
    await page.waitForSelector('#answer-feedback:not([hidden])');
    expect(requestId).not.toBe('');
    return { page, requestId };
  }

  it('shows "trace" beside the answer, linking to the trace of its request id, which opens it', async () => {
    const { page, requestId } = await answerIn(traced.url);
    const link = page.locator('#answer-meta a.trace-link');
    expect(await link.textContent()).toBe('trace');
    const href = await link.getAttribute('href');
    expect(href).toBe(`${trackerServer.url}/#/traces?request_id=${encodeURIComponent(requestId)}&experiment_id=${experimentId}`);

    // the platform's exporter sends the request's spans; the link then opens that trace
    const traceId = await exportRequestTrace(requestId, 'When does the bell ring?');
    const [tab] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
    await tab!.waitForSelector('#view[aria-busy=false]');
    await expect.poll(() => tab!.textContent('h2')).toBe(`Trace ${traceId}`);
    expect(await tab!.isVisible('#error')).toBe(false);
  });

  it('shows no link while tracing is off', async () => {
    const { page } = await answerIn(untraced.url);
    expect(await page.textContent('#answer-meta')).not.toBe('');
    expect(await page.locator('#answer-meta a').count()).toBe(0);
    expect(await page.locator('meta[name="svc-tracker-url"]').count()).toBe(0);
  });
});

describe("the explore console's link to a question's trace", () => {
  it('shows "trace" beside the results, linking to the trace of the request id the answer came with', async () => {
    const page = await newPage();
    await page.goto(exploreTraced.url);
    await signIn(page, 'ana', 'svc-analyst');
    await page.fill('#question', 'list the regions');
    const answered = page.waitForResponse((r) => r.url().endsWith('/query'));
    await page.click('#ask button[type=submit]');
    const requestId = (await (await answered).headerValue('x-request-id')) ?? '';
    await expect.poll(() => page.textContent('#count')).toBe('5 rows');
    expect(requestId).not.toBe('');
    const link = page.locator('#answer-trace a.trace-link');
    expect(await link.getAttribute('href')).toBe(
      `${trackerServer.url}/#/traces?request_id=${encodeURIComponent(requestId)}&experiment_id=${experimentId}`,
    );
  });
});

describe("a registered model's tags", () => {
  const serverTags = async () =>
    Object.fromEntries(
      ((await call('GET', 'registered-models/get?name=ranker')).registered_model.tags ?? []).map((t: Json) => [t.key, t.value]),
    );
  const tagRows = (page: Page) => page.$$eval('#tags tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset.tag));

  it('adds a tag, overwrites it, and deletes it through the model page, as registered-models/set-tag and delete-tag', async () => {
    const page = await openTracker('#/models/ranker');
    expect(await tagRows(page)).toEqual(['team']);
    await page.fill('#tag-key', 'stage');
    await page.fill('#tag-value', 'candidate');
    await page.press('#tag-value', 'Enter');
    await expect.poll(() => tagRows(page)).toEqual(['stage', 'team']);
    expect(await page.textContent('#tags tr[data-tag=stage] td')).toBe('candidate');
    expect(await serverTags()).toEqual({ stage: 'candidate', team: 'search' });

    await page.fill('#tag-key', 'stage');
    await page.fill('#tag-value', 'production <b>now</b>');
    await page.click('#add-tag button[type=submit]');
    await expect.poll(() => page.textContent('#tags tr[data-tag=stage] td')).toBe('production <b>now</b>');
    expect(await page.locator('#tags b').count()).toBe(0);
    expect((await serverTags()).stage).toBe('production <b>now</b>');

    await page.getByRole('button', { name: 'Delete tag team' }).click();
    await expect.poll(() => tagRows(page)).toEqual(['stage']);
    expect(await serverTags()).toEqual({ stage: 'production <b>now</b>' });
  });
});
