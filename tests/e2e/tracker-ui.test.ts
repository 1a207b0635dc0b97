import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { launchBrowser, pageFailures } from '../support/browser.ts';
import { trackerCall, trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// The tracker's web UI as a person uses it, in headless Chromium, against the tracker on PGlite with a folder
// artifact store. Everything it shows was written through the public REST API, as a client would.

let tracker: TrackerHarness;
let server: RunningServer;
let browser: Browser;

type Json = Record<string, any>;

const call = (method: string, path: string, body?: unknown): Promise<Json> => trackerCall(server.url, method, path, body);

/** The proxy path of a run's artifact, from the artifact URI the server gave the run (mlflow-artifacts:/...). */
function proxyPath(artifactUri: string, path: string): string {
  const m = /^mlflow-artifacts:(?:\/\/[^/]*)?\/*(.*)$/.exec(artifactUri);
  if (!m) throw new Error(`run artifacts are not proxied: ${artifactUri}`);
  return `/api/2.0/mlflow-artifacts/artifacts/${m[1]!.replace(/\/+$/, '')}/${path}`;
}

async function upload(artifactUri: string, path: string, bytes: Uint8Array): Promise<void> {
  const res = await fetch(`${server.url}${proxyPath(artifactUri, path)}`, { method: 'PUT', body: Buffer.from(bytes) });
  if (!res.ok) throw new Error(`upload ${path}: ${res.status} ${await res.text()}`);
}

const T0 = Date.UTC(2026, 10, 1, 9, 0, 0);
const seeded = {
  experimentName: 'churn <b>model</b>',
  experimentId: '',
  runs: {} as Record<'baseline' | 'tuned', { id: string; artifactUri: string }>,
  readme: new TextEncoder().encode('Trained on the November extract.\nSecond line: ünïcødé.\n'),
  weights: Uint8Array.from({ length: 1024 }, (_, i) => (i * 37) % 256),
  model: 'churn-classifier',
};

// Two runs with different parameters and metric histories of different lengths.
const RUNS = {
  baseline: { params: { lr: '0.1', optimizer: 'sgd' }, loss: [0.9, 0.7, 0.55, 0.5, 0.48], acc: 0.81 },
  tuned: { params: { lr: '0.01', optimizer: 'adam' }, loss: [0.8, 0.4, 0.3], acc: 0.93 },
} as const;

async function seed(): Promise<void> {
  seeded.experimentId = (await call('POST', 'experiments/create', { name: seeded.experimentName })).experiment_id;
  for (const [name, spec] of Object.entries(RUNS) as [keyof typeof RUNS, (typeof RUNS)[keyof typeof RUNS]][]) {
    const { run } = await call('POST', 'runs/create', { experiment_id: seeded.experimentId, run_name: name, start_time: T0 });
    const runId = run.info.run_id as string;
    seeded.runs[name] = { id: runId, artifactUri: run.info.artifact_uri };
    await call('POST', 'runs/log-batch', {
      run_id: runId,
      params: Object.entries(spec.params).map(([key, value]) => ({ key, value })),
      metrics: [
        ...spec.loss.map((value, step) => ({ key: 'loss', value, step, timestamp: T0 + step * 1000 })),
        { key: 'acc', value: spec.acc, step: 0, timestamp: T0 },
      ],
      tags: [{ key: 'team', value: 'retention' }],
    });
    await call('POST', 'runs/update', { run_id: runId, status: 'FINISHED', end_time: T0 + 65_000 });
  }
}

async function seedArtifacts(): Promise<void> {
  const baseline = seeded.runs.baseline;
  await upload(baseline.artifactUri, 'notes/readme.txt', seeded.readme);
  await upload(baseline.artifactUri, 'weights.bin', seeded.weights);
}

async function seedModel(): Promise<void> {
  await call('POST', 'registered-models/create', { name: seeded.model });
  for (const run of [seeded.runs.baseline, seeded.runs.tuned]) {
    await call('POST', 'model-versions/create', { name: seeded.model, source: `runs:/${run.id}/model`, run_id: run.id });
  }
  await call('POST', 'model-versions/transition-stage', {
    name: seeded.model,
    version: '1',
    stage: 'Production',
    archive_existing_versions: false,
  });
  await call('POST', 'model-versions/transition-stage', {
    name: seeded.model,
    version: '2',
    stage: 'Staging',
    archive_existing_versions: false,
  });
  await call('POST', 'registered-models/alias', { name: seeded.model, alias: 'champion', version: '2' });
}

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  tracker = await trackerHarness(); // PGlite in memory, artifacts in a temporary folder
  server = await startServer(tracker.app, 0, '127.0.0.1');
  await seed();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await tracker?.close();
});

async function open(hash: string): Promise<Page> {
  const page = await browser.newPage();
  const failures = pageFailures(page);
  await page.goto(`${server.url}/${hash}`);
  await page.waitForSelector('#view[aria-busy=false]');
  const error = await page
    .locator('#error')
    .filter({ visible: true })
    .textContent({ timeout: 100 })
    .catch(() => null);
  if (error) throw new Error(`the page shows an error: ${error}`);
  if (failures.length) throw new Error(`the page logged errors: ${failures.join('; ')}`);
  return page;
}

const cell = (page: Page, runId: string, column: string) =>
  page.textContent(`#runs tr[data-run-id="${runId}"] td[data-column="${column}"]`);
const rowOrder = (page: Page) => page.$$eval('#runs tbody tr[data-run-id]', (rows) => rows.map((r) => (r as HTMLElement).dataset.runId));

describe('tracker UI', () => {
  it('serves the page, its modules and its stylesheets from its own origin only', async () => {
    const page = await fetch(`${server.url}/`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<script type="module" src="ui/app.js">');
    expect(html).not.toMatch(/https?:\/\//);
    expect((await fetch(`${server.url}/ui/app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${server.url}/ui/app.css`)).headers.get('content-type')).toMatch(/^text\/css/);
    expect((await fetch(`${server.url}/ui/base.css`)).headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('lists experiments, showing names as text, never as markup', async () => {
    const page = await open('#/experiments');
    const row = page.locator(`#experiments tr[data-experiment-id="${seeded.experimentId}"]`);
    await expect.poll(() => row.locator('a').textContent()).toBe(seeded.experimentName);
    expect(await row.locator('b').count()).toBe(0);
    await row.locator('a').click();
    await page.waitForURL(`**/#/experiments/${seeded.experimentId}`);
  });

  it('shows the runs of several experiments in one table, each run with its experiment', async () => {
    const page = await open('#/experiments');
    await page.getByLabel('Select experiment Default').check();
    await page.getByLabel(`Select experiment ${seeded.experimentName}`).check();
    await page.click('#compare-experiments');
    await page.waitForSelector('#runs tbody tr[data-run-id]');
    const ids = decodeURIComponent(new URL(page.url()).hash).replace('#/experiments/', '').split(',');
    expect(ids.sort()).toEqual(['0', seeded.experimentId].sort());
    const rows = await page.$$eval('#runs tbody tr[data-run-id]', (trs) =>
      trs.map((r) => [...r.children].slice(1, 3).map((c) => c.textContent)),
    );
    expect(rows.sort()).toEqual([
      ['baseline', seeded.experimentName],
      ['tuned', seeded.experimentName],
    ]);
  });

  it('shows a runs table with a column per parameter and per metric, sortable, and compares the selected runs', async () => {
    const page = await open(`#/experiments/${seeded.experimentId}`);
    const { baseline, tuned } = seeded.runs;
    const headers = await page.$$eval('#runs thead th[data-column]', (ths) => ths.map((th) => (th as HTMLElement).dataset.column));
    expect(headers).toEqual(expect.arrayContaining(['params.lr', 'params.optimizer', 'metrics.acc', 'metrics.loss']));

    expect(await cell(page, baseline.id, 'params.lr')).toBe('0.1');
    expect(await cell(page, baseline.id, 'params.optimizer')).toBe('sgd');
    expect(await cell(page, baseline.id, 'metrics.acc')).toBe('0.81');
    expect(await cell(page, baseline.id, 'metrics.loss')).toBe('0.48'); // the latest step, not the first or the least
    expect(await cell(page, tuned.id, 'params.lr')).toBe('0.01');
    expect(await cell(page, tuned.id, 'params.optimizer')).toBe('adam');
    expect(await cell(page, tuned.id, 'metrics.acc')).toBe('0.93');
    expect(await cell(page, tuned.id, 'metrics.loss')).toBe('0.3');

    // Sorting asks the server (order_by) and is part of the link: acc descending, then ascending.
    await page.click('#runs th[data-column="metrics.acc"] button');
    const order = () => page.evaluate(() => new URLSearchParams(location.hash.split('?')[1]).get('order'));
    await expect.poll(order).toBe('metrics.acc DESC');
    await page.waitForSelector('#runs th[data-column="metrics.acc"][aria-sort=descending]');
    expect(await rowOrder(page)).toEqual([tuned.id, baseline.id]);
    await page.click('#runs th[data-column="metrics.acc"] button');
    await page.waitForSelector('#runs th[data-column="metrics.acc"][aria-sort=ascending]');
    expect(await order()).toBe('metrics.acc ASC');
    expect(await rowOrder(page)).toEqual([baseline.id, tuned.id]);

    await page.getByLabel('Select run baseline').check();
    await page.getByLabel('Select run tuned').check();
    await page.click('#compare');
    await page.waitForURL(/#\/compare\?runs=/);
    const runs = new URL(page.url().replace('#', '')).searchParams.get('runs')!.split(',');
    expect(runs.sort()).toEqual([baseline.id, tuned.id].sort());
    await page.waitForSelector('#charts figure[data-metric="loss"] path.series');
  });

  it('compares runs side by side with one chart line per run and one point per logged step', async () => {
    const { baseline, tuned } = seeded.runs;
    const page = await open(`#/compare?runs=${baseline.id},${tuned.id}`);
    const params = await page.$$eval('#compare-params tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    expect(params).toContainEqual(['lr (differs)', '0.1', '0.01']);
    expect(params).toContainEqual(['optimizer (differs)', 'sgd', 'adam']);
    const metrics = await page.$$eval('#compare-metrics tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    expect(metrics).toContainEqual(['loss (differs)', '0.48', '0.3']);

    const chart = page.locator('#charts figure[data-metric="loss"]');
    const lines = await chart
      .locator('path.series')
      .evaluateAll((paths) =>
        paths.map((p) => ({ run: (p as SVGPathElement).dataset.runId, points: (p.getAttribute('d') ?? '').match(/[ML]/g)?.length ?? 0 })),
      );
    expect(lines).toHaveLength(2);
    expect(lines).toContainEqual({ run: baseline.id, points: RUNS.baseline.loss.length });
    expect(lines).toContainEqual({ run: tuned.id, points: RUNS.tuned.loss.length });
    const labels = await chart.locator('.axis-label').allTextContents();
    expect(labels).toEqual(['step', 'loss']);
    // Later steps sit further right, and lower loss sits lower on the chart (greater y in SVG).
    const baselinePath = (await chart.locator(`path.series[data-run-id="${baseline.id}"]`).getAttribute('d'))!;
    const coords = [...baselinePath.matchAll(/[ML]([\d.]+),([\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
    for (let i = 1; i < coords.length; i++) {
      expect(coords[i]![0]).toBeGreaterThan(coords[i - 1]![0]);
      expect(coords[i]![1]).toBeGreaterThan(coords[i - 1]![1]);
    }
    expect(await page.locator('#charts figure[data-metric="acc"] path.series').count()).toBe(2);
  });

  it('shows a run page with params, metrics, tags and an artifact browser that downloads exact bytes', async () => {
    await seedArtifacts();
    const { baseline } = seeded.runs;
    const page = await open(`#/runs/${baseline.id}`);
    const params = await page.$$eval('#params tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    expect(params).toEqual([
      ['lr', '0.1'],
      ['optimizer', 'sgd'],
    ]);
    const metrics = await page.$$eval('#metrics tbody tr', (rows) =>
      rows.map((r) => [...r.children].slice(0, 3).map((c) => c.textContent)),
    );
    expect(metrics).toEqual([
      ['acc', '0.81', '0'],
      ['loss', '0.48', '4'],
    ]);
    expect(await page.$$eval('#tags tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)))).toEqual([
      ['team', 'retention', 'Delete'],
    ]);

    // The folder opens to show its file; the file downloads byte for byte and previews as text.
    const folder = page.getByRole('button', { name: 'Folder notes' });
    expect(await folder.getAttribute('aria-expanded')).toBe('false');
    await folder.click();
    await expect.poll(() => folder.getAttribute('aria-expanded')).toBe('true');
    const [readme] = await Promise.all([page.waitForEvent('download'), page.getByLabel('Download notes/readme.txt').click()]);
    expect(readme.suggestedFilename()).toBe('readme.txt');
    expect(new Uint8Array(await readFile((await readme.path())!))).toEqual(seeded.readme);

    const [weights] = await Promise.all([page.waitForEvent('download'), page.getByLabel('Download weights.bin').click()]);
    expect(new Uint8Array(await readFile((await weights.path())!))).toEqual(seeded.weights);

    await page.getByLabel('Preview notes/readme.txt').click();
    await expect.poll(() => page.textContent('#artifact-preview pre')).toBe(new TextDecoder().decode(seeded.readme));
    await page.getByLabel('Preview weights.bin').click();
    await expect.poll(() => page.textContent('#artifact-preview')).toContain('is binary');
  });

  it('shows registered models with their versions, stages, aliases and source runs', async () => {
    await seedModel();
    const page = await open('#/models');
    const row = page.locator(`#models tr[data-model="${seeded.model}"]`);
    await expect.poll(() => row.textContent()).toContain('@champion');
    await row.getByRole('link', { name: seeded.model }).click();
    await page.waitForSelector('#versions tr[data-version]');

    const versions = await page.$$eval('#versions tbody tr[data-version]', (rows) =>
      rows.map((r) => ({
        version: (r as HTMLElement).dataset.version,
        stage: r.querySelector('[data-column=stage]')?.textContent,
        aliases: r.querySelector('[data-column=aliases]')?.textContent,
        run: r.querySelector('a')?.getAttribute('href'),
        runName: r.querySelector('a')?.textContent,
      })),
    );
    expect(versions).toEqual([
      { version: '2', stage: 'Staging', aliases: '@champion', run: `#/runs/${seeded.runs.tuned.id}`, runName: 'tuned' },
      { version: '1', stage: 'Production', aliases: '', run: `#/runs/${seeded.runs.baseline.id}`, runName: 'baseline' },
    ]);
    await page.click(`#versions a[href="#/runs/${seeded.runs.tuned.id}"]`);
    await page.waitForSelector('#params');
    expect(await page.textContent('h2')).toBe('Run tuned');
  });

  it('says what went wrong when the API refuses, in the page', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/#/runs/no-such-run`);
    await expect.poll(() => page.textContent('#error')).toMatch(/RESOURCE_DOES_NOT_EXIST/);
    expect(await page.isVisible('#error')).toBe(true);
  });
});
