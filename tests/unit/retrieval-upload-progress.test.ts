import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { createOfflineEmbedder, type Embedder } from '../../src/platform/gateway/index.ts';
import { createOcrEngine, createPdfWorkers, extractDocument } from '../../src/retrieval/ingest/index.ts';
import { createUploadProgress } from '../../src/retrieval/upload-progress.ts';
import { writePdf } from '../support/pdf-writer.ts';
import { retrievalHarness, who, type Identity, type RetrievalHarness } from '../support/retrieval.ts';

// An upload's progress (issue 34): the client names its upload with upload_id and reads where it is at
// GET /collections/{slug}/uploads/{upload_id} while the POST runs.

const pdf = writePdf([1, 2, 3].map((n) => ({ lines: [`Page ${n} of the tide tables: high water at the north pier is at dawn.`] })));

let db: Database;
let h: RetrievalHarness;
// the embedding gateway holds every call until the test lets it go
let release: () => void = () => {};
let held = new Promise<void>((r) => {
  release = r;
});
const offline = createOfflineEmbedder(768);
const gated: Embedder = {
  ...offline,
  embed: async (texts) => {
    await held;
    return offline.embed(texts);
  },
};

beforeAll(async () => {
  db = await openPglite({});
  h = await retrievalHarness(db, {
    embedder: gated,
    env: { SVC_CHUNK_SIZE_TOKENS: '4', SVC_CHUNK_OVERLAP_TOKENS: '1', SVC_EMBED_BATCH_SIZE: '2' },
  });
  for (const slug of ['tides', 'elsewhere'])
    expect((await h.json('POST', '/collections', who.engineer, { slug, name: slug, allowed_roles: [] })).status).toBe(201);
});
afterAll(async () => {
  release();
  await h?.close();
  await db?.close();
});

const headers = (as: Identity) => ({ 'X-User-Id': as.user, 'X-User-Role': as.roles });
/** Sent as a browser sends it: the multipart body with its length declared. */
async function post(slug: string, as: Identity, file: { name: string; bytes: Uint8Array; type: string }, uploadId?: string) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name);
  const encoded = new Request('http://localhost/', { method: 'POST', body: form });
  const body = new Uint8Array(await encoded.arrayBuffer());
  const query = uploadId === undefined ? '' : `?upload_id=${encodeURIComponent(uploadId)}`;
  return h.app.request(`/collections/${slug}/documents${query}`, {
    method: 'POST',
    headers: { ...headers(as), 'Content-Type': encoded.headers.get('content-type')!, 'Content-Length': String(body.length) },
    body,
  });
}
const status = (slug: string, id: string, as: Identity = who.user) => h.json('GET', `/collections/${slug}/uploads/${id}`, as);

describe('an upload named with upload_id', () => {
  it('tells its uploader the stage it is at, then done with the document', async () => {
    const id = 'upload-0001';
    const posting = post('tides', who.user, { name: 'tides.pdf', bytes: pdf, type: 'application/pdf' }, id);
    await expect.poll(async () => (await status('tides', id)).body?.stage, { timeout: 20_000 }).toBe('embedding');
    const during = await status('tides', id);
    expect(during.status).toBe(200);
    expect(during.body).toMatchObject({
      upload_id: id,
      collection: 'tides',
      filename: 'tides.pdf',
      stage: 'embedding',
      bytes_received: pdf.length,
      pages_done: 3,
      pages_total: 3,
      chunks_done: 0,
      document_id: null,
      error: null,
    });
    expect(during.body.chunks_total).toBeGreaterThan(2);
    expect(during.body.message).toBe(`embedding 0 of ${during.body.chunks_total} chunks`);
    expect(during.body.bytes_total).toBeGreaterThan(pdf.length);

    // only its uploader reads it, through its own collection
    expect((await status('tides', id, who.analyst)).status).toBe(404);
    expect((await status('elsewhere', id)).status).toBe(404);
    expect((await h.json('GET', `/collections/tides/uploads/${id}`)).status).toBe(401);
    // the same name for another upload while this one runs
    const again = await post('tides', who.user, { name: 'other.txt', bytes: new TextEncoder().encode('other'), type: 'text/plain' }, id);
    expect(again.status).toBe(409);

    release();
    const res = await posting;
    expect(res.status).toBe(201);
    const document = await res.json();
    const after = await status('tides', id);
    expect(after.body).toMatchObject({
      stage: 'done',
      message: 'done',
      document_id: document.document_id,
      chunks_done: during.body.chunks_total,
    });
  });

  it('tells a refusal as failed, with the reason', async () => {
    const legacy = {
      name: 'old.doc',
      bytes: new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]),
      type: 'application/msword',
    };
    expect((await post('tides', who.user, legacy, 'upload-0002')).status).toBe(400);
    const failed = await status('tides', 'upload-0002');
    expect(failed.body).toMatchObject({ stage: 'failed', filename: 'old.doc' });
    expect(failed.body.error).toMatch(/Legacy Word \.doc files are not supported/);
    expect(failed.body.message).toBe(`failed: ${failed.body.error}`);

    expect((await post('tides', who.viewer, legacy, 'upload-0003')).status).toBe(403);
    expect((await status('tides', 'upload-0003', who.viewer)).body).toMatchObject({
      stage: 'failed',
      error: expect.stringMatching(/read-only/),
    });
  });

  it.each(['short', 'has space!', 'x'.repeat(101)])('refuses upload_id %j with 400', async (id) => {
    const res = await post('tides', who.user, { name: 'a.txt', bytes: new TextEncoder().encode('a b c'), type: 'text/plain' }, id);
    expect(res.status).toBe(400);
    expect((await res.json()).errors[0].location).toMatch(/upload_id/);
  });

  it('answers 404 for an upload nobody named', async () => {
    const res = await status('tides', 'never-sent-1');
    expect(res.status).toBe(404);
    expect(res.body.detail).toMatch(/on this replica/);
  });
});

describe('the progress registry', () => {
  it('forgets an upload a while after it ended, and never one still running', () => {
    let t = 0;
    const uploads = createUploadProgress({ keepMs: 1000, now: () => t });
    uploads.start('running-1', 'uma', 'tides', 10);
    const done = uploads.start('finished-1', 'uma', 'tides', 10);
    done.done('doc');
    t = 1000;
    expect(uploads.read('finished-1', 'uma', 'tides').stage).toBe('done');
    t = 1001;
    expect(() => uploads.read('finished-1', 'uma', 'tides')).toThrow(/No upload 'finished-1'/);
    t = 1_000_000;
    expect(uploads.read('running-1', 'uma', 'tides').stage).toBe('receiving');
  });

  it('holds at most maxTracked uploads, letting the oldest finished go first', () => {
    const uploads = createUploadProgress({ maxTracked: 2 });
    uploads.start('first-01', 'uma', 'tides', null).done('a');
    uploads.start('second-1', 'uma', 'tides', null);
    uploads.start('third-01', 'uma', 'tides', null);
    expect(() => uploads.read('first-01', 'uma', 'tides')).toThrow(/No upload/);
    expect(uploads.read('second-1', 'uma', 'tides').stage).toBe('receiving');
    // full of running uploads: a new one is received untracked
    uploads.start('fourth-1', 'uma', 'tides', null).done('b');
    expect(() => uploads.read('fourth-1', 'uma', 'tides')).toThrow(/No upload/);
  });
});

describe("a PDF's extraction", () => {
  const ocr = createOcrEngine({ langs: ['eng'] });
  afterAll(() => ocr.close());

  it.each([0, 2])('tells the page being read and the page count (%i worker threads)', async (threads) => {
    // the counters read every 5 ms: two workers can read the 300 pages within the default 200 ms
    const workers = threads > 0 ? createPdfWorkers(threads, { progressMs: 5 }) : undefined;
    try {
      const seen: [number, number][] = [];
      // many pages, so that the workers' counters are read while they still read
      const long = writePdf(Array.from({ length: 300 }, (_, n) => ({ lines: [`page ${n + 1} holds the word harbour`] })));
      const extracted = await extractDocument({
        filename: 'long.pdf',
        format: 'pdf',
        content: { bytes: long },
        ocr,
        pdfWorkers: workers,
        ocrEnabled: false,
        onProgress: (page, pages) => seen.push([page, pages]),
      });
      expect(extracted.pages).toHaveLength(300);
      expect(seen.length).toBeGreaterThan(0);
      for (const [page, pages] of seen) {
        expect(pages).toBe(300);
        expect(page).toBeGreaterThanOrEqual(0);
        expect(page).toBeLessThanOrEqual(300);
      }
      expect(seen.map(([page]) => page)).toEqual([...seen.map(([page]) => page)].sort((a, b) => a - b));
      if (!workers) expect(seen.at(-1)).toEqual([300, 300]);
    } finally {
      await workers?.close();
    }
  });
});
