import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { checkedPages, launchBrowser, signIn } from '../support/browser.ts';
import { exploreHarness, type ExploreHarness } from '../support/explore.ts';

// The explore console as an analyst's workbench, in headless Chromium against a running explore service (offline
// planner): ask, edit the SQL in the editor and run it, completion, saved questions, history, the CSV, and a failure
// that clears the earlier answer. Every page must run without an error or a Content-Security-Policy violation.
let h: ExploreHarness;
let server: RunningServer;
let browser: Browser;
const CONTACTS = 'SELECT c_name, c_acctbal FROM tpch.tiny.customer ORDER BY c_custkey LIMIT 5';

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  h = await exploreHarness();
  server = await startServer(h.app, 0, '127.0.0.1');
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await h?.close();
});

const newPage = checkedPages(() => browser);

async function openAs(user: string, role: string): Promise<Page> {
  const page = await newPage();
  await page.goto(server.url);
  await signIn(page, user, role);
  await expect.poll(() => page.locator('#model option').count()).toBe(1);
  return page;
}

/** The editor's whole text, lines joined by newlines. */
const editorText = (page: Page) => page.locator('#sql').innerText();

async function replaceSql(page: Page, sql: string): Promise<void> {
  await page.click('#sql');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(sql);
}

it('asks with Ctrl+Enter, then runs the SQL edited in the editor with Ctrl+Enter and with the Run SQL button', async () => {
  const page = await openAs('ana', 'svc-analyst');
  await page.fill('#question', 'how many customers per nation');
  await page.press('#question', 'Control+Enter');
  await expect.poll(() => page.textContent('#count')).toBe('25 rows');
  expect(await editorText(page)).toContain('LIMIT 10000');
  // highlighted as SQL: keywords carry the highlighter's class
  expect(await page.locator('#sql .tok-keyword').count()).toBeGreaterThan(0);

  await replaceSql(page, CONTACTS);
  await page.keyboard.press('Control+Enter');
  await expect.poll(() => page.textContent('#count')).toBe('5 rows');
  expect(await page.textContent('#redacted')).toBe('redacted: c_name');
  expect(await page.textContent('#results')).toContain('***');
  expect(await page.textContent('#reasoning')).toContain('edited SQL');

  await replaceSql(page, 'SELECT r_name FROM tpch.tiny.region ORDER BY r_name');
  await page.click('#workbench button[type=submit]');
  await expect.poll(() => page.textContent('#results')).toContain('AFRICA');
  expect(await page.textContent('#count')).toBe('5 rows');
  expect(await page.textContent('#reasoning')).toContain('tpch.tiny.region');
});

it('completes the tables the caller may read, and not one the policy closes', async () => {
  const page = await openAs('ana', 'svc-analyst');
  await replaceSql(page, '');
  await page.keyboard.type('SELECT * FROM tpch.tiny.');
  const options = page.locator('.cm-tooltip-autocomplete .cm-completionLabel');
  await expect.poll(() => options.allTextContents()).toContain('customer');
  expect(await options.allTextContents()).not.toContain('supplier');
  // columns of an open table too
  await page.keyboard.press('Escape');
  await replaceSql(page, '');
  await page.keyboard.type('SELECT tpch.tiny.customer.c_a');
  await expect.poll(() => options.allTextContents()).toContain('c_acctbal');
});

it('saves a question and loads it back from the saved list; the history lists what was asked and run', async () => {
  const page = await openAs('sam', 'svc-analyst');
  await page.fill('#question', 'how many orders per year');
  await page.click('#ask button[type=submit]');
  await expect.poll(() => page.textContent('#count')).toBe('7 rows');
  await replaceSql(page, CONTACTS);
  await page.keyboard.press('Control+Enter');
  await expect.poll(() => page.textContent('#count')).toBe('5 rows');

  await page.fill('#save-title', 'Five customers');
  await page.press('#save-title', 'Enter');
  await expect.poll(() => page.textContent('#saved')).toContain('Five customers');

  await replaceSql(page, '');
  await page.click('#saved .library-item');
  await expect.poll(() => editorText(page)).toContain('c_acctbal');

  await expect
    .poll(() => page.locator('#history li').allTextContents())
    .toEqual([expect.stringContaining('SELECT c_name, c_acctbal'), expect.stringContaining('how many orders per year')]);
  await replaceSql(page, '');
  await page.click('#history li:nth-child(2) .library-item');
  await expect.poll(() => editorText(page)).toContain('extract(year FROM s.o_orderdate)');
  expect(await page.inputValue('#question')).toBe('how many orders per year');

  // after a reload, both lists come back from the service
  await page.reload(); // the sign-in is remembered
  await expect.poll(() => page.textContent('#saved')).toContain('Five customers');
});

it('downloads the CSV of the result on screen, its personal column masked', async () => {
  const page = await openAs('ana', 'svc-analyst');
  await replaceSql(page, CONTACTS);
  await page.keyboard.press('Control+Enter');
  await expect.poll(() => page.textContent('#count')).toBe('5 rows');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv')]);
  expect(download.suggestedFilename()).toBe('explore-result.csv');
  const lines = (await readFile((await download.path())!, 'utf8')).split('\r\n');
  expect(lines[0]).toBe('c_name,c_acctbal');
  expect(lines.slice(1, 6).every((l) => l.startsWith('***,'))).toBe(true);
  expect(lines.join('\n')).not.toContain('Customer#');
});

it('clears the earlier answer when a question fails, and keeps an edited statement that fails', async () => {
  const page = await openAs('cleo', 'svc-analyst');
  await page.fill('#question', 'how many customers per nation');
  await page.click('#ask button[type=submit]');
  await expect.poll(() => page.textContent('#count')).toBe('25 rows');
  expect(await page.isVisible('#after')).toBe(true);

  await page.fill('#question', 'how many suppliers are there');
  await page.click('#ask button[type=submit]');
  await expect.poll(() => page.textContent('#error')).toContain('tpch.tiny.supplier');
  expect(await page.textContent('#count')).toBe('');
  expect(await page.textContent('#results')).toBe('');
  expect(await page.textContent('#reasoning')).toBe('');
  expect(await page.isHidden('#after')).toBe(true);
  expect(await page.isHidden('#redacted')).toBe(true);
  expect(await page.isDisabled('#csv')).toBe(true);
  expect(await editorText(page)).not.toContain('nation');

  await replaceSql(page, CONTACTS);
  await page.keyboard.press('Control+Enter');
  await expect.poll(() => page.textContent('#count')).toBe('5 rows');
  await replaceSql(page, 'SELECT s_name FROM tpch.tiny.supplier');
  await page.keyboard.press('Control+Enter');
  await expect.poll(() => page.textContent('#error')).toContain('The SQL reads tpch.tiny.supplier, which is not open to you');
  expect(await page.textContent('#results')).toBe('');
  expect(await editorText(page)).toBe('SELECT s_name FROM tpch.tiny.supplier');
});
