import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { createOfflineEmbedder, type Embedder } from '../../src/platform/gateway/index.ts';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { checkedPages, launchBrowser, signIn } from '../support/browser.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';

// The reader's library (issue 34) as a person uses it, in headless Chromium against a running retrieval service:
// upload two documents and watch each file's progress reach done, filter a search to one document, re-index one,
// download its text, delete one and see it gone from the table and from the results.
let db: Database;
let h: RetrievalHarness;
let server: RunningServer;
let browser: Browser;

// the embedding gateway holds the calls for the file that mentions tides until the test has seen it embedding
let release: () => void = () => {};
const gate = new Promise<void>((r) => {
  release = r;
});
const offline = createOfflineEmbedder(768);
const gated: Embedder = {
  ...offline,
  embed: async (texts) => {
    if (texts.some((t) => t.includes('tides'))) await gate;
    return offline.embed(texts);
  },
};

const TIDES = Array.from({ length: 12 }, (_, i) => `Spring tides reach the harbour wall at hour ${i} twice a month.`).join(' ');
const LAMPS = 'The lighthouse lamps by the harbour wall were replaced with LEDs in 2019.';

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  db = await openPglite({});
  h = await retrievalHarness(db, {
    embedder: gated,
    env: { SVC_CHUNK_SIZE_TOKENS: '12', SVC_CHUNK_OVERLAP_TOKENS: '2', SVC_EMBED_BATCH_SIZE: '2' },
  });
  server = await startServer(h.app, 0, '127.0.0.1');
  browser = await launchBrowser();
  expect((await h.json('POST', '/collections', who.engineer, { slug: 'harbour', name: 'Harbour', allowed_roles: [] })).status).toBe(201);
});
afterAll(async () => {
  release();
  await browser?.close();
  await server?.close();
  await h?.close();
  await db?.close();
});

const newPage = checkedPages(() => browser);

it('uploads with progress, filters a search, re-indexes, downloads the text and deletes a document', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await signIn(page, 'uma', 'svc-user');
  await page.click('#collections li[data-slug="harbour"]');
  await expect.poll(() => page.textContent('#d-title')).toContain('harbour');

  // two files at once: each has its row, and the held one shows the service's stage before it is done
  await page.setInputFiles('#file', [
    { name: 'tides.txt', mimeType: 'text/plain', buffer: Buffer.from(TIDES) },
    { name: 'lamps.txt', mimeType: 'text/plain', buffer: Buffer.from(LAMPS) },
  ]);
  const stage = (file: string) => `#uploads li[data-file="${file}"] .stage`;
  await expect.poll(() => page.textContent(stage('lamps.txt'))).toBe('done');
  await expect.poll(() => page.textContent(stage('tides.txt'))).toMatch(/^embedding 0 of \d+ chunks$/);
  expect(await page.getAttribute(`#uploads li[data-file="tides.txt"] progress`, 'value')).toBe('0');
  release();
  await expect.poll(() => page.textContent(stage('tides.txt'))).toBe('done');
  expect(await page.getAttribute(`#uploads li[data-file="tides.txt"] progress`, 'value')).toBe('100');
  await expect.poll(() => page.locator('#documents tr').count()).toBe(2);
  await expect.poll(() => page.isHidden('#progress')).toBe(true);

  const filenames = async () => (await page.locator('#results .chunk .meta').allTextContents()).map((meta) => meta.split(' · ')[0]);

  // unfiltered, Ctrl+Enter in the question box: both documents answer
  await page.fill('#topk', '20');
  await page.fill('#question', 'what reaches the harbour wall');
  await page.press('#question', 'Control+Enter');
  await expect.poll(async () => new Set(await filenames())).toEqual(new Set(['tides.txt', 'lamps.txt']));

  // filtered to one document, and Enter in a one-line box searches too
  await page.selectOption('#f-docs', { label: 'lamps.txt' });
  await page.press('#topk', 'Enter');
  await expect.poll(async () => new Set(await filenames())).toEqual(new Set(['lamps.txt']));
  await page.click('#f-clear');

  // re-index one
  await page.click('button[aria-label="Re-index tides.txt"]');
  await expect.poll(() => page.textContent('#doc-said')).toMatch(/^tides\.txt re-indexed: \d+ chunks\.$/);

  // download its text
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('button[aria-label="Download the text of tides.txt"]')]);
  expect(download.suggestedFilename()).toBe('tides.txt');
  expect(await readFile((await download.path())!, 'utf8')).toBe(TIDES);

  // delete one: gone from the table, the filter's choices and the results
  page.once('dialog', (dialog) => dialog.accept());
  await page.click('button[aria-label="Delete lamps.txt"]');
  await expect.poll(() => page.locator('#documents tr').count()).toBe(1);
  expect(await page.locator('#documents td', { hasText: 'lamps.txt' }).count()).toBe(0);
  expect(await page.locator('#f-docs option').allTextContents()).toEqual(['tides.txt']);
  await page.fill('#question', 'lighthouse lamps replaced with LEDs at the harbour wall');
  await page.press('#question', 'Control+Enter');
  await expect.poll(async () => new Set(await filenames())).toEqual(new Set(['tides.txt']));
  const docs = await h.json('GET', '/collections/harbour/documents', who.user);
  expect(docs.body.documents.map((d: { filename: string }) => d.filename)).toEqual(['tides.txt']);
});
