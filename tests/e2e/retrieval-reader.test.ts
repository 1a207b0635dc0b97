import { execFileSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { ANSWER_ENV, coastPdf, ledgerNote, sourcesOf } from '../support/answer-fixtures.ts';
import { checkedPages, launchBrowser, signIn } from '../support/browser.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';

// The reader's library in headless Chromium: a PDF uploaded from the console, an answer whose citation opens the
// page drawn by pdf.js with the quote highlighted, and a conversation kept: followed up, listed, renamed, continued
// after a reload, deleted.
let db: Database;
let gw: ScriptedGateway;
let h: RetrievalHarness;
let server: RunningServer;
let browser: Browser;

const FIRST = 'How often does the fog horn at Point Reyes sound?';
const FOLLOW_UP = 'And who writes its hours down?';
const STANDALONE = 'Who writes the fog horn hours at Point Reyes down?';

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  db = await openPglite({});
  gw = await startScriptedGateway({ models: ['svc-chat'] });
  gw.script.chat = (body) => {
    // a follow-up's rewrite, then answers that cite the passage they rest on
    if (String(body.messages[0].content).includes('standalone question')) return STANDALONE;
    const sources = sourcesOf(body);
    const ledger = sources.find((s) => s.text.includes('ledger'));
    if (String(body.messages.at(-1).content).includes('writes') && ledger) return `The keepers write them in a green ledger [${ledger.n}].`;
    const fog = sources.find((s) => s.text.includes('thirty seconds'))!;
    return `The fog horn sounds every thirty seconds [${fog.n}].`;
  };
  h = await retrievalHarness(db, { env: { ...ANSWER_ENV, SVC_CHAT_URL: gw.url } });
  await h.json('POST', '/collections', who.engineer, { slug: 'coast', name: 'Coast', allowed_roles: [] });
  await h.upload('coast', who.engineer, { name: 'keepers.md', bytes: ledgerNote(), type: 'text/markdown' });
  // the conversation's own collection, so neither test depends on the other
  await h.json('POST', '/collections', who.engineer, { slug: 'shore', name: 'Shore', allowed_roles: [] });
  await h.upload('shore', who.engineer, { name: 'keepers.md', bytes: ledgerNote(), type: 'text/markdown' });
  await h.upload('shore', who.engineer, { name: 'coast.pdf', bytes: coastPdf(), type: 'application/pdf' });
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

const newPage = checkedPages(() => browser);

async function openSignedIn(page: Page) {
  await page.goto(server.url);
  await signIn(page, who.engineer.user, who.engineer.roles);
}

async function ask(page: Page, question: string) {
  const before = await page.locator('#conv-list li').count();
  await page.fill('#question', question);
  await page.click('#answer-btn');
  await expect.poll(() => page.textContent('#answer-meta')).toContain('answered by svc-chat');
  return before;
}

it('opens a cited PDF page drawn from the uploaded file, with the quote highlighted', async () => {
  const page = await newPage();
  await openSignedIn(page);
  await page.click('#collections li[data-slug="coast"]');
  // a file chosen before the collection has opened goes nowhere (the console uploads to the open collection): on a
  // busy machine the click's reads had not answered yet, and the test waited for a row that could never come
  await expect.poll(() => page.textContent('#d-title')).toContain('coast');
  await page.setInputFiles('#file', { name: 'coast.pdf', mimeType: 'application/pdf', buffer: Buffer.from(coastPdf()) });
  await page.waitForSelector('#documents tr:has-text("coast.pdf"), #upload-error:not(:empty)', { timeout: 60_000 });
  expect(await page.textContent('#upload-error')).toBe('');
  await page.waitForSelector('#documents tr:has-text("coast.pdf")');

  await ask(page, FIRST);
  await page.click('#answer-text button.marker');
  await page.waitForSelector('#pv-render .pv-highlight');
  expect(await page.textContent('#pv-title')).toBe('coast.pdf · page 3 of 3');
  // the page is drawn (dark text on the canvas), and the highlight lies on it where the quote's lines are
  const drawn = await page.evaluate(() => {
    const canvas = document.querySelector<HTMLCanvasElement>('#pv-render canvas')!;
    const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    let dark = 0;
    for (let i = 0; i < pixels.length; i += 4) if (pixels[i]! < 128) dark++;
    const boxes = [...document.querySelectorAll<HTMLElement>('#pv-render .pv-highlight')].map((b) => ({
      top: b.offsetTop,
      left: b.offsetLeft,
      width: b.offsetWidth,
      height: b.offsetHeight,
    }));
    return { dark, width: canvas.width, height: canvas.height, boxes };
  });
  expect(drawn.dark).toBeGreaterThan(200);
  expect(drawn.boxes.length).toBeGreaterThanOrEqual(1);
  for (const box of drawn.boxes) {
    expect(box.width).toBeGreaterThan(0);
    expect(box.top).toBeGreaterThanOrEqual(0);
    expect(box.top + box.height).toBeLessThanOrEqual(drawn.height);
    expect(box.left + box.width).toBeLessThanOrEqual(drawn.width + 1);
  }
  // the text view stays beneath, with the quote marked
  expect(await page.textContent('#pv-text .chunk.cited mark')).toContain('thirty seconds');

  // a Markdown citation has no drawn page: its text only
  await ask(page, 'Who writes the fog horn hours?');
  await page.click('#answer-text button.marker');
  await expect.poll(() => page.textContent('#pv-title')).toContain('keepers.md');
  expect(await page.locator('#pv-render canvas').count()).toBe(0);
}, 120_000);

it('keeps a conversation: follows up, lists, renames, continues after a reload, deletes', async () => {
  // a fresh page starts a new conversation, whatever the earlier test left listed
  const page = await newPage();
  await openSignedIn(page);
  await page.click('#collections li[data-slug="shore"]');
  const listed = await page.locator('#conv-list li').count();

  await ask(page, FIRST);
  await expect.poll(() => page.locator('#conv-list li').count()).toBe(listed + 1);
  const item = page.locator('#conv-list li.active');
  expect(await item.locator('.conv-title').textContent()).toBe(FIRST);

  // the follow-up goes to the same conversation: the earlier turn shows above, and it is read as a standalone question
  await ask(page, FOLLOW_UP);
  expect(await page.textContent('#answer-meta')).toContain(`read as: ${STANDALONE}`);
  expect(await page.locator('#thread li').count()).toBe(1);
  expect(await page.textContent('#thread li .thread-q')).toBe(FIRST);
  expect(await page.locator('#conv-list li').count()).toBe(listed + 1);
  const id = await item.getAttribute('data-session');
  expect((await h.json('GET', `/sessions/${id}`, who.engineer)).body.turns).toHaveLength(2);

  // rename in place: Enter saves
  await item.locator('button[aria-label^="Rename"]').click();
  await page.fill('#conv-list input.conv-rename', 'Fog horn');
  await page.press('#conv-list input.conv-rename', 'Enter');
  await expect.poll(() => page.textContent(`#conv-list li[data-session="${id}"] .conv-title`)).toBe('Fog horn');

  // after a reload the conversation is listed; picking it shows its turns and the next question continues it
  await page.reload();
  await page.click(`#conv-list li[data-session="${id}"] .conv-title`);
  await expect.poll(() => page.locator('#thread li').count()).toBe(2);
  expect(await page.textContent('#d-title')).toContain('shore');
  await ask(page, 'And where is that ledger kept?');
  expect(await page.textContent('#answer-meta')).toContain('read as:');
  const session = (await h.json('GET', `/sessions/${id}`, who.engineer)).body;
  expect(session).toMatchObject({ title: 'Fog horn', collection: 'shore' });
  expect(session.turns.map((t: any) => t.question)).toEqual([FIRST, FOLLOW_UP, 'And where is that ledger kept?']);
  // an earlier turn's marker still opens its page
  await page.click('#thread li:first-child button.marker');
  await page.waitForSelector('#pv-render .pv-highlight');

  // delete, after saying yes
  page.once('dialog', (dialog) => void dialog.accept());
  await page.click(`#conv-list li[data-session="${id}"] button[aria-label^="Delete"]`);
  await expect.poll(() => page.locator(`#conv-list li[data-session="${id}"]`).count()).toBe(0);
  expect((await h.json('GET', `/sessions/${id}`, who.engineer)).status).toBe(404);
});
