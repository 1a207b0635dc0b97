import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { type Json, trackerUi } from '../support/tracker-ui.ts';

// The tracker UI's deletions, descriptions and links, in headless Chromium, each checked in the page and in what the
// REST API answers afterwards: runs and experiments deleted and restored, Markdown descriptions and notes (a hostile
// one shown as text), a model version's tags and description, and a run's traces.

const seeded = { experimentId: '', scratchId: '', keep: '', drop: '', model: 'described-model', sourceTrace: '', linkedTrace: '' };
const traceId = () => `tr-${randomBytes(16).toString('hex')}`;

const ui = trackerUi(async ({ call }) => {
  seeded.experimentId = (await call('POST', 'experiments/create', { name: 'lifecycle' })).experiment_id;
  seeded.scratchId = (await call('POST', 'experiments/create', { name: 'scratch' })).experiment_id;
  for (const name of ['keep', 'drop'] as const) {
    const { run } = await call('POST', 'runs/create', { experiment_id: seeded.experimentId, run_name: name });
    seeded[name] = run.info.run_id;
  }
  await call('POST', 'registered-models/create', { name: seeded.model });
  await call('POST', 'model-versions/create', { name: seeded.model, source: `runs:/${seeded.keep}/model`, run_id: seeded.keep });
  await call('POST', 'model-versions/set-tag', { name: seeded.model, version: '1', key: 'validated', value: 'yes' });

  // a trace made in the run (its metadata names it), one linked to it afterwards, and one of neither
  const startTrace = (id: string, metadata: Record<string, string>) =>
    call(
      'POST',
      'traces',
      {
        trace: {
          trace_info: {
            trace_id: id,
            trace_location: { type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: seeded.experimentId } },
            request_time: new Date().toISOString(),
            execution_duration: '0.25s',
            state: 'OK',
            request_preview: `request of ${id}`,
            trace_metadata: metadata,
          },
        },
      },
      'api/3.0/mlflow',
    );
  seeded.sourceTrace = traceId();
  seeded.linkedTrace = traceId();
  await startTrace(seeded.sourceTrace, { 'mlflow.sourceRun': seeded.keep });
  await startTrace(seeded.linkedTrace, {});
  await startTrace(traceId(), {});
  await call('POST', 'traces/link-to-run', { trace_ids: [seeded.linkedTrace], run_id: seeded.keep }, 'api/3.0/mlflow');
});

const runRows = (page: Page) => page.$$eval('#runs tbody tr[data-run-id]', (rows) => rows.map((r) => (r as HTMLElement).dataset.runId));
const experimentRow = (page: Page, id: string) => page.locator(`#experiments tr[data-experiment-id="${id}"]`);
const lifecycleOfRun = async (id: string) => (await ui.call('GET', `runs/get?run_id=${id}`)).run.info.lifecycle_stage;
const experiment = async (id: string) => (await ui.call('GET', `experiments/get?experiment_id=${id}`)).experiment;
const version = async () => (await ui.call('GET', `model-versions/get?name=${seeded.model}&version=1`)).model_version;
const tagsOf = (tags: Json[] | undefined) => Object.fromEntries((tags ?? []).map((t) => [t.key, t.value]));

/** Types Markdown into the page's note or description and saves it. */
async function saveNote(page: Page, text: string): Promise<void> {
  await page.fill('#note-text', text);
  await page.click('#edit-note button[type=submit]');
  await page.waitForSelector('#view[aria-busy=false] div#note');
}

describe('tracker UI: delete and restore', () => {
  it('deletes a run from its page and restores it from the deleted runs of its experiment', async () => {
    const page = await ui.open(`#/runs/${seeded.drop}`);
    expect(await page.textContent('#lifecycle')).toBe('active');
    await page.getByRole('button', { name: 'Delete run drop' }).click();
    await expect.poll(() => page.textContent('#lifecycle')).toBe('deleted');
    expect(await lifecycleOfRun(seeded.drop)).toBe('deleted');
    await ui.expectAccessible(page);

    await page.goto(`${ui.url()}/#/experiments/${seeded.experimentId}`);
    await expect.poll(() => runRows(page)).toEqual([seeded.keep]);
    await page.selectOption('#run-view', 'deleted');
    await expect.poll(() => runRows(page)).toEqual([seeded.drop]);
    expect(new URLSearchParams(page.url().split('?')[1]).get('view')).toBe('deleted');
    expect(await page.textContent(`#runs tr[data-run-id="${seeded.drop}"] [data-column=lifecycle]`)).toMatch(/^deleted/);

    await page.getByRole('button', { name: 'Restore run drop' }).click();
    await expect.poll(() => runRows(page)).toEqual([]);
    expect(await lifecycleOfRun(seeded.drop)).toBe('active');
    await page.selectOption('#run-view', 'all');
    await expect.poll(async () => (await runRows(page)).sort()).toEqual([seeded.keep, seeded.drop].sort());
  });

  it('deletes an experiment from its page and restores it from the deleted experiments', async () => {
    const page = await ui.open(`#/experiments/${seeded.scratchId}`);
    await page.getByRole('button', { name: 'Delete experiment scratch' }).click();
    await expect.poll(() => page.textContent('#experiment-lifecycle')).toBe('deleted');
    expect((await experiment(seeded.scratchId)).lifecycle_stage).toBe('deleted');

    await page.goto(`${ui.url()}/#/experiments`);
    await page.waitForSelector(`#experiments tr[data-experiment-id="${seeded.experimentId}"]`);
    expect(await experimentRow(page, seeded.scratchId).count()).toBe(0);
    await page.selectOption('#experiment-view', 'deleted');
    await expect.poll(() => experimentRow(page, seeded.scratchId).count()).toBe(1);
    expect(await experimentRow(page, seeded.experimentId).count()).toBe(0);

    await page.getByRole('button', { name: 'Restore experiment scratch' }).click();
    await expect.poll(() => experimentRow(page, seeded.scratchId).count()).toBe(0);
    expect((await experiment(seeded.scratchId)).lifecycle_stage).toBe('active');
  });
});

describe('tracker UI: descriptions and notes as Markdown', () => {
  it('renames an experiment and saves its description, rendered as Markdown', async () => {
    const page = await ui.open(`#/experiments/${seeded.experimentId}`);
    await page.fill('#experiment-name', 'lifecycle renamed');
    await page.press('#experiment-name', 'Enter');
    await expect.poll(() => page.textContent('h2')).toBe('Experiment lifecycle renamed');
    expect((await experiment(seeded.experimentId)).name).toBe('lifecycle renamed');

    expect(await page.textContent('#note')).toBe('No description.');
    const text = '# Goal\n\nReduce **churn**; see [the plan](https://example.org/plan).\n\n- one\n- two';
    await saveNote(page, text);
    expect(await page.textContent('#note h3')).toBe('Goal');
    expect(await page.textContent('#note strong')).toBe('churn');
    expect(await page.$$eval('#note li', (items) => items.map((i) => i.textContent))).toEqual(['one', 'two']);
    const link = page.locator('#note a');
    expect(await link.getAttribute('href')).toBe('https://example.org/plan');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(tagsOf((await experiment(seeded.experimentId)).tags)['mlflow.note.content']).toBe(text);
    await ui.expectAccessible(page);
  });

  it('shows a hostile note as text: no script, event handler or javascript: link reaches the page', async () => {
    const page = await ui.open(`#/runs/${seeded.keep}`);
    const payload = [
      '**bold** <script>window.__xss = 1</script>',
      '<img src=x onerror="window.__xss = 2">',
      '[click](javascript:window.__xss=3) <svg onload="window.__xss = 4"></svg>',
      '<a href="https://example.org" onclick="window.__xss = 5">raw link</a> ![pixel](https://example.org/p.png)',
    ].join('\n\n');
    await saveNote(page, payload);
    const note = page.locator('#note');
    expect(await note.locator('strong').textContent()).toBe('bold');
    for (const markup of ['script', 'img', 'svg', '[onerror]', '[onload]', '[onclick]', 'a[href^="javascript"]'])
      expect(await note.locator(markup).count(), markup).toBe(0);
    // the raw HTML is shown as the text it is
    expect(await note.textContent()).toContain('<script>window.__xss = 1</script>');
    expect(await note.textContent()).toContain('<img src=x onerror="window.__xss = 2">');
    // the image is a link to it, not fetched
    expect(await note.locator('a[href="https://example.org/p.png"]').textContent()).toBe('pixel');
    await note.locator('a', { hasText: /^click$/ }).click();
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    const stored = tagsOf((await ui.call('GET', `runs/get?run_id=${seeded.keep}`)).run.data.tags);
    expect(stored['mlflow.note.content']).toBe(payload);
  });

  it("edits a model's description, and a version's description and tags; the tags the client set show", async () => {
    const page = await ui.open(`#/models/${seeded.model}`);
    expect(await page.textContent('#versions tr[data-version="1"] [data-column=tags]')).toBe('validated: yes');
    await saveNote(page, 'Predicts *churn* a month ahead.');
    expect(await page.textContent('#note em')).toBe('churn');
    const model = (await ui.call('GET', `registered-models/get?name=${seeded.model}`)).registered_model;
    expect(model.description).toBe('Predicts *churn* a month ahead.');
    await ui.call('POST', 'registered-models/alias', { name: seeded.model, alias: 'champion', version: '1' });
    await page.reload();
    await page.waitForSelector('#versions [data-column=edit-aliases] button');
    await ui.expectAccessible(page); // the model page, with an alias's Remove button

    await page.getByRole('link', { name: 'Open version 1' }).click();
    await page.waitForSelector('#tags tr[data-tag=validated]');
    expect(await page.textContent('h2')).toBe(`Model ${seeded.model} version 1`);
    expect(await page.textContent('#tags tr[data-tag=validated] td')).toBe('yes');

    await page.fill('#tag-key', 'reviewed');
    await page.fill('#tag-value', 'by olivia');
    await page.press('#tag-value', 'Enter');
    await page.waitForSelector('#tags tr[data-tag=reviewed]');
    await page.getByRole('button', { name: 'Delete tag validated' }).click();
    await expect.poll(() => page.locator('#tags tr[data-tag=validated]').count()).toBe(0);
    expect(tagsOf((await version()).tags)).toEqual({ reviewed: 'by olivia' });

    await saveNote(page, 'Trained on `2026-11` data.');
    expect(await page.textContent('#note code')).toBe('2026-11');
    expect((await version()).description).toBe('Trained on `2026-11` data.');
    await ui.expectAccessible(page);
  });
});

describe('tracker UI: runs and their traces', () => {
  it("lists a run's traces, made in it or linked to it, and links a trace back to its run", async () => {
    const page = await ui.open(`#/runs/${seeded.keep}`);
    const traces = await page.$$eval('#traces tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset.traceId));
    expect(traces.sort()).toEqual([seeded.sourceTrace, seeded.linkedTrace].sort());

    await page.locator(`#traces tr[data-trace-id="${seeded.sourceTrace}"] a`).click();
    await page.waitForSelector('#trace-run');
    expect(await page.textContent('h2')).toBe(`Trace ${seeded.sourceTrace}`);
    expect(await page.textContent('#trace-run')).toBe(seeded.keep);
    // its spans were never sent: the page says so and shows the trace's info
    expect(await page.textContent('#no-spans')).toMatch(/no spans in the tracking store/);
    await page.click('#trace-run');
    await expect.poll(() => page.textContent('h2')).toBe('Run keep');
  });
});
