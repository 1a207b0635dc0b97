import { execFileSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { createOfflineEmbedder, type Embedder } from '../../src/platform/gateway/index.ts';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { checkedPages, launchBrowser, signIn } from '../support/browser.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';

// The console as a person uses it, in headless Chromium against a running retrieval service.
let db: Database;
let h: RetrievalHarness;
let server: RunningServer;
let browser: Browser;
// the embedding gateway holds each call a moment and counts the calls it holds: how many uploads are stored at once
const gateway = { held: 0, peak: 0 };
const offline = createOfflineEmbedder(768);
const counting: Embedder = {
  ...offline,
  embed: async (texts) => {
    gateway.peak = Math.max(gateway.peak, ++gateway.held);
    await new Promise((r) => setTimeout(r, 150));
    gateway.held--;
    return offline.embed(texts);
  },
};

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  db = await openPglite({});
  h = await retrievalHarness(db, { embedder: counting });
  server = await startServer(h.app, 0, '127.0.0.1');
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await h?.close();
  await db?.close();
});

// Every page a test opens must run without an error or a Content-Security-Policy violation.
const newPage = checkedPages(() => browser);

it('is served with a Content-Security-Policy that allows no inline script', async () => {
  const res = await fetch(server.url);
  const csp = res.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
});

it('creates a collection, uploads a file, asks a question, sees the chunk, and deletes the collection', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await signIn(page, 'eve', 'svc-engineer');

  await page.fill('#c-name', 'Field Notes 2026');
  await expect.poll(() => page.inputValue('#c-slug')).toBe('field-notes-2026');
  await page.fill('#c-desc', 'notes from the field');
  await page.click('#create button[type=submit]');
  await page.waitForSelector('#collections li[data-slug="field-notes-2026"]');
  await expect.poll(() => page.textContent('#d-title')).toContain('field-notes-2026');

  await page.setInputFiles('#file', {
    name: 'notes.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from('The beavers built a new dam upstream of the old mill in April.'),
  });
  await page.waitForSelector('#documents td:has-text("INDEXED")');

  // the same bytes again, under another name: the console says the collection already holds them
  await page.setInputFiles('#file', {
    name: 'notes-copy.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from('The beavers built a new dam upstream of the old mill in April.'),
  });
  await expect
    .poll(() => page.textContent('#upload-error'))
    .toContain('notes-copy.txt: already in this collection as notes.txt; nothing was added.');
  expect(await page.locator('#documents tr').count()).toBe(1);

  // several files at once, sent a few at a time (the gateway sees more than one upload's chunks at once): each lands
  // once, and what was said of each is listed in the files' order
  gateway.peak = 0;
  const text = (name: string, words: string) => ({ name, mimeType: 'text/plain', buffer: Buffer.from(words) });
  await page.setInputFiles('#file', [
    text('tides.txt', 'Spring tides reach the harbour wall twice a month.'),
    text('lamps.txt', 'The lighthouse lamps were replaced with LEDs in 2019.'),
    { name: 'old.doc', mimeType: 'application/msword', buffer: Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]) },
    text('ferry.txt', 'The ferry leaves at dawn from the north pier.'),
    text('notes-again.txt', 'The beavers built a new dam upstream of the old mill in April.'),
  ]);
  await expect.poll(() => page.locator('#documents tr').count()).toBe(4);
  await expect.poll(() => page.isHidden('#progress')).toBe(true);
  const said = (await page.textContent('#upload-error'))!.trim().split('\n');
  expect(said).toEqual([
    expect.stringMatching(/^old\.doc: Legacy Word \.doc files are not supported/),
    'notes-again.txt: already in this collection as notes.txt; nothing was added.',
  ]);
  expect(gateway.peak).toBeGreaterThan(1);

  await page.fill('#question', 'where did the beavers build a dam');
  await page.click('#ask button[type=submit]');
  await page.waitForSelector('#results .chunk');
  const meta = await page.textContent('#results .chunk .meta');
  expect(meta).toMatch(/notes\.txt · page 1 · score 0\.\d{3}/);
  expect(await page.textContent('#results .chunk .text')).toContain('beavers built a new dam');

  page.once('dialog', (dialog) => dialog.accept());
  await page.click('#delete');
  await page.waitForSelector('#collections li[data-slug="field-notes-2026"]', { state: 'detached' });
  expect((await h.json('GET', '/collections/field-notes-2026', who.admin)).status).toBe(404);
});

it('shows the reason when the caller may not create a collection', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await signIn(page, 'vic', 'svc-viewer');
  await page.fill('#c-name', 'Nope');
  await page.click('#create button[type=submit]');
  await expect.poll(() => page.textContent('#create-error')).toMatch(/Not allowed to create/);
});
