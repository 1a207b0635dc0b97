import { execFileSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { ANSWER_ENV, coastPdf, FOG_SENTENCE, ledgerNote, sourcesOf } from '../support/answer-fixtures.ts';
import { checkedPages, launchBrowser, signIn } from '../support/browser.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';

// The console's answer as a person sees it, in headless Chromium: it streams in, and a marker opens the cited page.
let db: Database;
let gw: ScriptedGateway;
let h: RetrievalHarness;
let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  db = await openPglite({});
  gw = await startScriptedGateway({ models: ['svc-chat'] });
  gw.script.streamDelayMs = 40;
  gw.script.chat = (body) => {
    const fog = sourcesOf(body).find((s) => s.text.includes('thirty seconds'))!.n;
    return `At Point Reyes the fog horn sounds every thirty seconds [${fog}], day and night while the fog lasts.`;
  };
  h = await retrievalHarness(db, { env: { ...ANSWER_ENV, SVC_CHAT_URL: gw.url } });
  await h.json('POST', '/collections', who.engineer, { slug: 'coast', name: 'Coast', allowed_roles: [] });
  await h.upload('coast', who.engineer, { name: 'coast.pdf', bytes: coastPdf(), type: 'application/pdf' });
  await h.upload('coast', who.engineer, { name: 'keepers.md', bytes: ledgerNote(), type: 'text/markdown' });
  server = await startServer(h.app, 0, '127.0.0.1');
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await h?.close();
  await gw?.close();
  await db?.close();
});

// Every page a test opens must run without an error or a Content-Security-Policy violation.
const newPage = checkedPages(() => browser);

it('streams an answer in, and opens the cited page with the quote marked when its marker is clicked', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await signIn(page, who.engineer.user, who.engineer.roles);
  await page.click('#collections li[data-slug="coast"]');
  await expect.poll(() => page.textContent('#d-title')).toContain('coast');

  // every change of the answer's text, counted in the page: a streamed answer grows a delta at a time
  await page.evaluate(() => {
    const target = document.getElementById('answer-text')!;
    (window as any).answerChanges = 0;
    new MutationObserver((records) => ((window as any).answerChanges += records.length)).observe(target, {
      childList: true,
      characterData: true,
      subtree: true,
    });
  });
  await page.fill('#question', 'How often does the fog horn at Point Reyes sound?');
  await page.click('#answer-btn');
  await page.waitForSelector('#answer-text button.marker');
  expect(await page.evaluate(() => (window as any).answerChanges)).toBeGreaterThan(5);
  expect(await page.textContent('#answer-text')).toMatch(
    /^At Point Reyes the fog horn sounds every thirty seconds \[\d\], day and night while the fog lasts\.$/,
  );
  expect(await page.textContent('#answer-meta')).toContain('answered by svc-chat');
  expect(await page.textContent('#answer-sources')).toContain(`coast.pdf · page 3: “${FOG_SENTENCE}”`);

  await page.click('#answer-text button.marker');
  await page.waitForSelector('#page-view:not([hidden])');
  expect(await page.textContent('#pv-title')).toBe('coast.pdf · page 3 of 3');
  expect(await page.textContent('#pv-text .chunk.cited mark')).toBe(FOG_SENTENCE);

  // thumbs down is stored with the answer's audit record
  await page.click('#fb-down');
  await expect.poll(() => page.textContent('#fb-said')).toContain('recorded as not useful');
  const audit = await h.json('GET', '/audit/queries?limit=1', who.engineer);
  expect(audit.body.queries[0]).toMatchObject({ answer: { outcome: 'answered' }, feedback: { rating: 'down' } });
});

it('says so when the collection holds nothing on the question', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await signIn(page, who.engineer.user, who.engineer.roles);
  await page.click('#collections li[data-slug="coast"]');
  await expect.poll(() => page.textContent('#d-title')).toContain('coast');
  await page.fill('#question', 'Which currency does Mongolia use?');
  await page.click('#answer-btn');
  await expect.poll(() => page.textContent('#answer-meta')).toContain('nothing in this collection on the question');
  expect(await page.locator('#answer-text button.marker').count()).toBe(0);
});
