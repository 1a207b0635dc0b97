import { execFileSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { launchBrowser, pageFailures, signIn } from '../support/browser.ts';
import { runtimeHarness, type RuntimeHarness } from '../support/dashboards.ts';
import { exploreHarness, type ExploreHarness } from '../support/explore.ts';

// A person asks in the explore console, shares the answer from there, and another person opens it in the
// runtime, which shows the page from a sandbox of their own, styled under its strict CSP; a person it is not shared
// with is refused.
let h: ExploreHarness;
let runtime: RuntimeHarness;
let served: RunningServer;
let browser: Browser;

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  h = await exploreHarness({ SVC_COST_GATE: 'false' });
  runtime = await runtimeHarness(h);
  served = await startServer(runtime.app, 0, '127.0.0.1');
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await runtime?.close();
  await h?.close();
});

it('shares a dashboard from the console and opens it for the right people only', async () => {
  const page = await browser.newPage();
  await page.goto(runtime.explore.url);
  await signIn(page, 'olivia', 'svc-analyst');
  await page.fill('#question', 'how many customers are there per nation');
  await page.click('#ask button[type=submit]');
  await page.waitForSelector('#share', { state: 'visible' });
  const href = (await page.getAttribute('#dashboard', 'href'))!;
  const id = href.split('/').at(-1)!;
  await page.selectOption('#visibility', 'users');
  await page.fill('#share-users', 'luke');
  await page.click('#share button[type=submit]');
  await expect.poll(() => page.textContent('#shared')).toBe('Shared: users');

  const viewAs = async (user: string, role: string) => {
    const context = await browser.newContext({ extraHTTPHeaders: { 'X-User-Id': user, 'X-User-Role': role } });
    const tab = await context.newPage();
    const failures = pageFailures(tab);
    const res = await tab.goto(`${served.url}/d/${id}`);
    return { status: res!.status(), tab, pid: res!.headers()['x-sandbox-pid'], context, failures };
  };
  const luke = await viewAs('luke', 'svc-user');
  expect(luke.status).toBe(200);
  expect(await luke.tab.textContent('h1')).toBe('how many customers are there per nation');
  // ECharts' bars (dashboards/chart-svg.ts), one a nation, in the dashboard page's accent colour
  expect(await luke.tab.locator('svg path[fill="#2f6fae"]').count()).toBe(25);
  // Under the page's strict CSP its own stylesheet applies (admitted by hash) and nothing is refused.
  expect(await luke.tab.locator('body').evaluate((el) => getComputedStyle(el).marginTop)).toBe('32px');
  expect(luke.failures).toEqual([]);
  const owner = await viewAs('olivia', 'svc-analyst');
  expect(owner.status).toBe(200);
  expect(owner.pid).not.toBe(luke.pid);
  const stranger = await viewAs('oscar', 'svc-analyst');
  expect(stranger.status).toBe(403);
  expect(await stranger.tab.textContent('body')).toMatch(/not shared with the caller/);
  for (const v of [luke, owner, stranger]) await v.context.close();
});
