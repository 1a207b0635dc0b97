import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptedFixtures, rejectedFixtures, scannedPdf, scanPng, zipBombDocx, type Fixture } from './fixtures.ts';
import { retrievalHarness, who, type RetrievalHarness } from './retrieval.ts';
import type { OpenDb } from './retrieval-contract.ts';

// Every accepted and refused format, through HTTP, on PGlite (unit) and real Postgres (integration).
const SIZE = 40;
const OVERLAP = 8;
const expectedChunks = (words: number) => (words <= SIZE ? 1 : 1 + Math.ceil((words - SIZE) / (SIZE - OVERLAP)));

export function retrievalFormatsContract(label: string, openDb: OpenDb) {
  describe(`retrieval formats (${label})`, () => {
    let h: RetrievalHarness;
    let ocrOn: RetrievalHarness;
    const cleanups: (() => Promise<void>)[] = [];

    beforeAll(async () => {
      const env = {
        SVC_CHUNK_SIZE_TOKENS: String(SIZE),
        SVC_CHUNK_OVERLAP_TOKENS: String(OVERLAP),
        SVC_RAG_MAX_EXTRACTED_BYTES: String(8 * 1024 * 1024),
      };
      const a = await openDb();
      const b = await openDb();
      cleanups.push(a.cleanup, b.cleanup);
      h = await retrievalHarness(a.db, { env });
      ocrOn = await retrievalHarness(b.db, { env: { ...env, SVC_RAG_OCR_ENABLED: 'true' } });
      for (const harness of [h, ocrOn]) {
        await harness.json('POST', '/collections', who.engineer, { slug: 'library', name: 'Library', allowed_roles: [] });
      }
    });
    afterAll(async () => {
      await h?.close();
      await ocrOn?.close();
      for (const c of cleanups) await c();
    });

    const counts = async (harness: RetrievalHarness) => {
      const res = await harness.json('GET', '/collections/library', who.admin);
      return { documents: res.body.document_count, chunks: res.body.chunk_count };
    };
    const findPage = async (harness: RetrievalHarness, f: Fixture) => {
      const q = await harness.json('POST', '/collections/library/query', who.user, { question: f.sentence, top_k: 50 });
      expect(q.status).toBe(200);
      // with overlapping windows several chunks may hold the sentence: the one where it starts earliest is its passage
      const sentence = f.sentence!.toLowerCase();
      const hit = q.body.chunks
        .filter((c: { filename: string; text: string }) => c.filename === f.name && c.text.toLowerCase().includes(sentence))
        .sort(
          (a: { text: string }, b: { text: string }) => a.text.toLowerCase().indexOf(sentence) - b.text.toLowerCase().indexOf(sentence),
        )[0];
      expect(hit, `a chunk of ${f.name} holding "${f.sentence}"`).toBeDefined();
      return hit;
    };

    it('ingests every accepted format to INDEXED with the right chunk count and finds the known sentence on its page, without OCR', async () => {
      for (const f of await acceptedFixtures()) {
        const up = await h.upload('library', who.engineer, f);
        expect(up.status, `${f.name}: ${JSON.stringify(up.body)}`).toBe(201);
        expect(up.body).toMatchObject({ filename: f.name, status: 'INDEXED', ocr_pages: 0 });
        if (f.words !== undefined) expect(up.body.chunk_count, f.name).toBe(expectedChunks(f.words));
        expect(up.body.chunk_count).toBeGreaterThan(0);
        const hit = await findPage(h, f);
        expect(hit.page, f.name).toBe(f.page);
      }
      expect(h.deps.ocr.started).toBe(false);
    });

    it('keeps table rows as rows and drops scripts and styles', async () => {
      const q = await h.json('POST', '/collections/library/query', who.user, { question: 'fruit tonnes pears', top_k: 50 });
      expect(q.body.chunks.map((c: { text: string }) => c.text).join('\n')).toContain('Pears | 12');
      const all = await h.json('POST', '/collections/library/query', who.user, { question: 'secretScriptWord color red', top_k: 50 });
      expect(all.body.chunks.map((c: { text: string }) => c.text).join(' ')).not.toMatch(/secretScriptWord|color:red/);
    });

    it('refuses each unsupported or malformed file with 400 naming the problem, and the counts do not move', async () => {
      const before = await counts(h);
      for (const { fixture, says } of await rejectedFixtures()) {
        const res = await h.upload('library', who.engineer, fixture);
        expect(res.status, fixture.name).toBe(400);
        expect(res.body.detail, fixture.name).toMatch(says);
      }
      expect(await counts(h)).toEqual(before);
    });

    it('refuses a zip bomb quickly with 413 and stores nothing', async () => {
      const before = await counts(h);
      const started = Date.now();
      const res = await h.upload('library', who.engineer, {
        name: 'bomb.docx',
        type: 'application/octet-stream',
        bytes: await zipBombDocx(64 * 1024 * 1024),
      });
      expect(res.status).toBe(413);
      expect(res.body.detail).toMatch(/zip bomb/);
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(await counts(h)).toEqual(before);
    });

    it('OCRs a scanned PDF page and finds it by a question about its text', async () => {
      const f = scannedPdf();
      const up = await h.upload('library', who.engineer, f);
      expect(up.status).toBe(201);
      expect(up.body).toMatchObject({ status: 'INDEXED', pages: 2, ocr_pages: 1 });
      const q = await h.json('POST', '/collections/library/query', who.user, {
        question: 'How much did the quarterly revenue of Northwind grow?',
        top_k: 1,
      });
      expect(q.body.chunks[0]).toMatchObject({ filename: f.name });
      expect(q.body.chunks[0].text.toLowerCase()).toMatch(/northwind.*twelve/);
    });

    it('indexes images only when SVC_RAG_OCR_ENABLED is on', async () => {
      const f = scanPng();
      const up = await ocrOn.upload('library', who.engineer, f);
      expect(up.status).toBe(201);
      expect(up.body).toMatchObject({ format: 'image', status: 'INDEXED', ocr_pages: 1 });
      const hit = await findPage(ocrOn, { ...f, sentence: 'quarterly revenue of Northwind' });
      expect(hit.page).toBe(1);
    });
  });
}
