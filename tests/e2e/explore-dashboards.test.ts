import { execFileSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { checkedPages, launchBrowser, signIn } from '../support/browser.ts';
import { runtimeHarness, type RuntimeHarness } from '../support/dashboards.ts';
import { exploreHarness, type ExploreHarness } from '../support/explore.ts';

// An analyst changes a result's chart in the explore console and publishes it, builds a dashboard of two cards from
// "My dashboards", and opens it in the runtime: both cards, the chart as SVG, under the page's strict CSP. The
// runtime's home page lists it. Every page must run without an error or a CSP violation (checkedPages).
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

const newPage = checkedPages(() => browser);

async function ask(page: Page, question: string): Promise<string> {
  const before = await page.getAttribute('#dashboard', 'href');
  await page.fill('#question', question);
  await page.click('#ask button[type=submit]');
  await expect.poll(() => page.getAttribute('#dashboard', 'href')).not.toBe(before);
  return (await page.getAttribute('#dashboard', 'href'))!.split('/').at(-1)!;
}

it('changes the chart, publishes it, builds a two-card dashboard and opens it in the runtime', async () => {
  const page = await newPage();
  await page.goto(runtime.explore.url);
  await signIn(page, 'olivia', 'svc-analyst');

  // the console proposes bars for a label and a count, drawn on a canvas
  const perNation = await ask(page, 'how many customers are there per nation');
  await page.waitForSelector('#chart-panel', { state: 'visible' });
  expect(await page.inputValue('#chart-type')).toBe('bar');
  expect(await page.inputValue('#chart-x')).toBe('nation');
  expect(await page.inputValue('#chart-y')).toBe('customer');
  await expect.poll(() => page.locator('#chart canvas').count()).toBeGreaterThan(0);

  // the analyst prefers a line, and publishes it to the dashboard
  await page.selectOption('#chart-type', 'line');
  await page.click('#chart-publish');
  await expect.poll(() => page.textContent('#chart-saved')).toBe('Published to the dashboard.');

  const orders = await ask(page, 'how many orders are there');
  expect(await page.inputValue('#chart-type')).toBe('table');
  await expect.poll(() => page.locator('#my-dashboards tbody tr').count()).toBe(2);

  // two of my dashboards, built into one
  await page.check(`#my-dashboards input[value="${perNation}"]`);
  await page.check(`#my-dashboards input[value="${orders}"]`);
  await page.fill('#build-title', 'Customers and orders');
  await page.click('#build-submit');
  await page.waitForSelector('#built a');
  const board = (await page.getAttribute('#built a', 'href'))!.split('/').at(-1)!;
  await expect.poll(() => page.locator('#my-dashboards tbody tr').count()).toBe(3);
  expect(await page.textContent('#my-dashboards')).toContain('2 cards');

  // shared from the list: the share form now names the dashboard chosen
  await page.click('button[aria-label="share Customers and orders"]');
  expect(await page.textContent('#share-target')).toBe('Customers and orders');
  await page.selectOption('#visibility', 'users');
  await page.fill('#share-users', 'luke');
  await page.click('#share button[type=submit]');
  await expect.poll(() => page.textContent('#shared')).toBe('Shared: users');
  await expect.poll(() => page.textContent('#my-dashboards')).toContain('users');

  // the runtime shows both cards, the first with the line chart the analyst published, as SVG
  const context = await browser.newContext({ extraHTTPHeaders: { 'X-User-Id': 'olivia', 'X-User-Role': 'svc-analyst' } });
  const view = await context.newPage();
  const failures: string[] = [];
  view.on('console', (m) => m.type() === 'error' && failures.push(m.text()));
  const res = await view.goto(`${served.url}/d/${board}`);
  expect(res!.status()).toBe(200);
  expect(await view.textContent('h1')).toBe('Customers and orders');
  expect(await view.locator('iframe.card').count()).toBe(2);
  const first = view.frameLocator(`iframe.card[data-dashboard="${perNation}"]`);
  const second = view.frameLocator(`iframe.card[data-dashboard="${orders}"]`);
  expect(await first.locator('h1').textContent()).toBe('how many customers are there per nation');
  expect(await first.locator('svg[role=img]').getAttribute('aria-label')).toBe('line chart of customer by nation');
  expect(await first.locator('svg path').count()).toBeGreaterThan(10);
  expect(await second.locator('h1').textContent()).toBe('how many orders are there');
  expect(await second.locator('table').textContent()).toContain('15000');
  // each card's own stylesheet applies inside its frame, admitted by its hash
  expect(await first.locator('body').evaluate((el) => getComputedStyle(el).fontFamily)).toMatch(/system-ui/);
  expect(failures).toEqual([]);

  // the runtime's home page lists it, with a link to it
  const home = await view.goto(served.url);
  expect(home!.status()).toBe(200);
  expect(await view.getAttribute('a:text("Customers and orders")', 'href')).toBe(`d/${board}`);
  expect(await view.locator('tbody tr').count()).toBe(3);
  expect(failures).toEqual([]);
  await context.close();

  // luke, whom it is shared with, finds it on the home page too, and only it
  const lukes = await browser.newContext({ extraHTTPHeaders: { 'X-User-Id': 'luke', 'X-User-Role': 'svc-user' } });
  const lukeView = await lukes.newPage();
  expect((await lukeView.goto(served.url))!.status()).toBe(200);
  expect(await lukeView.locator('tbody a').evaluateAll((links) => links.map((a) => a.getAttribute('href')))).toEqual([`d/${board}`]);
  expect((await lukeView.goto(`${served.url}/d/${board}`))!.status()).toBe(200);
  await lukes.close();
});
