import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { seriousViolations } from '../support/axe.ts';
import { launchBrowser, pageFailures, signIn } from '../support/browser.ts';
import { runtimeHarness, type RuntimeHarness } from '../support/dashboards.ts';
import { exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// Every console page as a person sees it, in light and in dark: axe-core finds no violation of impact serious or
// critical (contrast among them), and the same run writes the screenshots the README links (docs/screenshots/).

const SHOTS = 'docs/screenshots';
const SCHEMES = ['light', 'dark'] as const;
let db: Database;
let explore: ExploreHarness;
let runtime: RuntimeHarness;
let retrieval: RetrievalHarness;
let tracker: TrackerHarness;
let runtimeServer: RunningServer;
let retrievalServer: RunningServer;
let trackerServer: RunningServer;
let browser: Browser;
let experimentId = '';

const NOTES = [
  'Field notes, November 2026.',
  'The north orchard was pruned on the third; the pears on the east wall ripened a week early.',
  'Rain gauge: 41 mm over the month, most of it in the second week.',
].join('\n\n');

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  mkdirSync(SHOTS, { recursive: true });
  db = await openPglite({});
  [explore, retrieval, tracker] = await Promise.all([exploreHarness({ SVC_COST_GATE: 'false' }), retrievalHarness(db), trackerHarness()]);
  runtime = await runtimeHarness(explore);
  runtimeServer = await startServer(runtime.app, 0, '127.0.0.1');
  retrievalServer = await startServer(retrieval.app, 0, '127.0.0.1');
  trackerServer = await startServer(tracker.app, 0, '127.0.0.1');

  const created = await retrieval.json('POST', '/collections', who.engineer, {
    slug: 'field-notes',
    name: 'Field notes',
    description: 'Notes from the orchard',
    allowed_roles: [],
  });
  expect(created.status).toBe(201);
  const uploaded = await retrieval.upload('field-notes', who.engineer, { name: 'november.txt', bytes: new TextEncoder().encode(NOTES) });
  expect(uploaded.status).toBe(201);

  experimentId = (await tracker.post('experiments/create', { name: 'churn model' })).body.experiment_id;
  for (const [name, lr, losses] of [
    ['baseline', '0.1', [0.9, 0.7, 0.55, 0.5]],
    ['tuned', '0.01', [0.8, 0.4, 0.3, 0.28]],
  ] as const) {
    const { run } = (await tracker.post('runs/create', { experiment_id: experimentId, run_name: name, start_time: Date.UTC(2026, 10, 1) }))
      .body;
    const metrics = losses.map((value, step) => ({ key: 'loss', value, timestamp: Date.UTC(2026, 10, 1) + step, step }));
    const logged = await tracker.post('runs/log-batch', { run_id: run.info.run_id, params: [{ key: 'lr', value: lr }], metrics });
    expect(logged.status).toBe(200);
  }
  browser = await launchBrowser();
}, 240_000);
afterAll(async () => {
  await browser?.close();
  for (const s of [runtimeServer, retrievalServer, trackerServer]) await s?.close();
  await runtime?.close();
  await explore?.close();
  await retrieval?.close();
  await tracker?.close();
  await db?.close();
});

/**
 * Checks the page in both schemes and writes its two screenshots; `ready` is what the page must show first.
 * Fails on any serious or critical axe violation, and on any error or CSP violation in the page, listing them all.
 */
async function checkBothSchemes(page: Page, failures: string[], name: string, ready: string): Promise<void> {
  const found: string[] = [];
  for (const colorScheme of SCHEMES) {
    await page.emulateMedia({ colorScheme });
    await page.waitForSelector(ready);
    found.push(...(await seriousViolations(page)).map((v) => `${name} (${colorScheme}): ${v}`));
    await page.screenshot({ path: `${SHOTS}/${name}-${colorScheme}.png` });
  }
  await page.emulateMedia({ colorScheme: 'light' });
  expect(found, found.join('\n')).toEqual([]);
  expect(failures).toEqual([]);
}

async function newPage(context?: BrowserContext): Promise<{ page: Page; failures: string[] }> {
  const page = context ? await context.newPage() : await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.setViewportSize({ width: 1280, height: 800 });
  return { page, failures: pageFailures(page) };
}

describe('every console page has no serious or critical accessibility violation, in light and dark', () => {
  let dashboardUrl = '';

  it('the explore console, signed out', async () => {
    const { page, failures } = await newPage();
    await page.goto(runtime.explore.url);
    await checkBothSchemes(page, failures, 'sign-in', '#sign-in [name=user]');
    await page.close();
  });

  it('the explore console, signed in with a result on screen', async () => {
    const { page, failures } = await newPage();
    await page.goto(runtime.explore.url);
    await signIn(page, 'olivia', 'svc-analyst');
    await page.fill('#question', 'how many customers are there per nation');
    await page.click('#ask button[type=submit]');
    await expect.poll(() => page.textContent('#count')).toBe('25 rows');
    dashboardUrl = (await page.getAttribute('#dashboard', 'href')) ?? '';
    await checkBothSchemes(page, failures, 'explore', '#results table');
    await page.close();
  });

  it('the retrieval console, signed in, with a collection and a document', async () => {
    const { page, failures } = await newPage();
    await page.goto(retrievalServer.url);
    await signIn(page, who.engineer.user, who.engineer.roles);
    await page.click('#collections li[data-slug="field-notes"]');
    await page.waitForSelector('#documents td');
    await page.fill('#question', 'when did the pears ripen');
    await page.click('#ask button[type=submit]');
    await checkBothSchemes(page, failures, 'retrieval', '#results .chunk');
    await page.close();
  });

  it('the tracker UI with an experiment', async () => {
    const { page, failures } = await newPage();
    await page.goto(`${trackerServer.url}/#/experiments/${experimentId}`);
    await page.waitForSelector('#view[aria-busy="false"]');
    await checkBothSchemes(page, failures, 'tracker', 'table');
    await page.close();
  });

  it('a published dashboard, opened through the dashboards runtime', async () => {
    expect(dashboardUrl).toMatch(/\/d\/[0-9a-f-]{36}$/);
    const context = await browser.newContext({ extraHTTPHeaders: { 'X-User-Id': 'olivia', 'X-User-Role': 'svc-analyst' } });
    const { page, failures } = await newPage(context);
    const res = await page.goto(`${runtimeServer.url}/d/${dashboardUrl.split('/').at(-1)}`);
    expect(res?.status()).toBe(200);
    await checkBothSchemes(page, failures, 'dashboard', 'table');
    await context.close();
  });

  it("the dashboards runtime's home page, listing what the viewer may open", async () => {
    const context = await browser.newContext({ extraHTTPHeaders: { 'X-User-Id': 'olivia', 'X-User-Role': 'svc-analyst' } });
    const { page, failures } = await newPage(context);
    const res = await page.goto(`${runtimeServer.url}/`);
    expect(res?.status()).toBe(200);
    await checkBothSchemes(page, failures, 'runtime-home', `a[href$="${dashboardUrl.split('/').at(-1)}"]`);
    await context.close();
  });
});
