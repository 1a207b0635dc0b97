import { execFileSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { checkedPages, launchBrowser, signIn } from '../support/browser.ts';
import { exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';

// The explore console in headless Chromium, against a running explore service with a scripted model gateway.
let gw: ScriptedGateway;
let h: ExploreHarness;
let server: RunningServer;
let browser: Browser;
const PER_NATION_SQL =
  'SELECT n.n_name AS nation, count(*) AS customers FROM tpch.tiny.customer c JOIN tpch.tiny.nation n ON c.c_nationkey = n.n_nationkey GROUP BY n.n_name';
let answer = `Customers per nation.\n\`\`\`sql\n${PER_NATION_SQL}\n\`\`\``;

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  gw = await startScriptedGateway({ models: ['svc-chat', 'big-model'], chat: () => answer });
  h = await exploreHarness({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat', SVC_COST_BYTES_LIMIT: '100000' });
  server = await startServer(h.app, 0, '127.0.0.1');
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await h?.close();
  await gw?.close();
});

// Every page a test opens must run without an error or a Content-Security-Policy violation.
const newPage = checkedPages(() => browser);

it('is served with a Content-Security-Policy that allows no inline script', async () => {
  const res = await fetch(server.url);
  const csp = res.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
});

async function openAs(user: string, role: string): Promise<Page> {
  const page = await newPage();
  await page.goto(server.url);
  await signIn(page, user, role);
  await expect.poll(() => page.locator('#model option').count()).toBe(2);
  return page;
}

it('asks, shows the cost gate, confirms, and shows SQL, reasoning, rows, the dashboard link and feedback', async () => {
  const page = await openAs('ana', 'svc-analyst');
  await page.fill('#question', 'how many customers are there per nation');
  await page.click('#ask button[type=submit]');
  await expect.poll(() => page.textContent('#error')).toMatch(/confirm_cost=true/);
  expect(await page.textContent('#cost')).toMatch(/estimated \d+ bytes/);

  await page.check('#confirm');
  await page.click('#ask button[type=submit]');
  await expect.poll(() => page.textContent('#count')).toBe('25 rows');
  expect(await page.locator('#sql').innerText()).toContain('LIMIT 10000');
  expect(await page.textContent('#reasoning')).toContain('tpch.tiny.nation');
  expect(await page.textContent('#reasoning')).toContain('Customers per nation.');
  expect(await page.isHidden('#redacted')).toBe(true);
  expect(await page.getAttribute('#dashboard', 'href')).toMatch(/\/d\/[0-9a-f-]{36}$/);
  await page.click('#up');
  await expect.poll(() => page.textContent('#thanks')).toContain('Thanks');
});

it('shows the redaction badge, runs a dry run, and remembers the chosen model', async () => {
  const page = await openAs('ana', 'svc-analyst');
  answer = '```sql\nSELECT c_name, c_acctbal FROM tpch.tiny.customer ORDER BY c_custkey LIMIT 3\n```';
  await page.selectOption('#model', 'big-model');
  await page.check('#confirm');
  await page.fill('#question', 'three customers with their balance');
  await page.click('#ask button[type=submit]');
  await expect.poll(() => page.textContent('#count')).toBe('3 rows');
  expect(await page.textContent('#redacted')).toBe('redacted: c_name');
  expect(await page.textContent('#results')).toContain('***');
  expect(gw.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body.model).toBe('big-model');

  await page.check('#dry');
  await page.fill('#question', 'the same, dry');
  await page.click('#ask button[type=submit]');
  await expect.poll(() => page.textContent('#count')).toBe('0 rows');
  expect(await page.locator('#sql').innerText()).toContain('c_name');

  await page.reload();
  await expect.poll(() => page.inputValue('#model')).toBe('big-model');
});

it('is closed to svc-viewer', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await signIn(page, 'vic', 'svc-viewer');
  await page.waitForSelector('#no-console', { state: 'visible' });
  expect(await page.isDisabled('#question')).toBe(true);
});
