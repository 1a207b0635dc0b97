import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/platform/db/index.ts';
import { docx } from '../fixtures/ooxml.ts';
import { officeTypes } from './fixtures.ts';
import { writePdf } from './pdf-writer.ts';
import type { OpenDb } from './retrieval-contract.ts';
import { retrievalHarness, who, type RetrievalHarness } from './retrieval.ts';

// Ingestion's guarantees now that its steps overlap (issue 18: the content lookup runs beside extraction, the
// spooled file goes while the rows are written), through HTTP, on PGlite (unit) and real Postgres (integration):
// a document's chunks are stored all and in order or not at all, bytes already held are a duplicate whatever their
// extraction would say, and no spooled file stays behind whatever the outcome.

const WINDOW = 20;
const OVERLAP = 5;
const STRIDE = WINDOW - OVERLAP;
const WORDS_PER_PAGE = 40 * 10;

/** A digital PDF of `pages` pages, 40 lines of 10 words each, every word naming its page, line and place. */
const wordAt = (i: number) => `p${Math.floor(i / WORDS_PER_PAGE) + 1}w${i % WORDS_PER_PAGE}`;
const pdfOf = (pages: number, mark: (i: number) => string = wordAt) =>
  writePdf(
    Array.from({ length: pages }, (_, p) => ({
      lines: Array.from({ length: 40 }, (_, l) => Array.from({ length: 10 }, (_, k) => mark(p * WORDS_PER_PAGE + l * 10 + k)).join(' ')),
    })),
  );

export function retrievalIngestContract(label: string, openDb: OpenDb) {
  describe(`retrieval ingestion, stored whole or not at all (${label})`, () => {
    let h: RetrievalHarness;
    let db: Database;
    let cleanup: () => Promise<void>;
    let spool: string;

    beforeAll(async () => {
      const opened = await openDb();
      db = opened.db;
      cleanup = opened.cleanup;
      spool = await mkdtemp(join(tmpdir(), 'svc-ingest-spool-'));
      h = await retrievalHarness(db, {
        env: { SVC_CHUNK_SIZE_TOKENS: String(WINDOW), SVC_CHUNK_OVERLAP_TOKENS: String(OVERLAP), SVC_UPLOAD_TMP_DIR: spool },
      });
      await h.json('POST', '/collections', who.engineer, { slug: 'manuals', name: 'Manuals', allowed_roles: [] });
    });
    afterAll(async () => {
      await h?.close();
      await cleanup?.();
      if (spool) await rm(spool, { recursive: true, force: true });
    });

    const counts = async () => {
      const res = await h.json('GET', '/collections/manuals', who.admin);
      return { documents: res.body.document_count, chunks: res.body.chunk_count };
    };
    const pdf = (name: string, bytes: Uint8Array) => h.upload('manuals', who.engineer, { name, type: 'application/pdf', bytes });

    it('stores a long PDF of hundreds of chunks, every chunk in order with its page', async () => {
      const pages = 20; // 8 000 words: 533 windows, written by one COPY of many 64 KiB pieces
      const words = pages * WORDS_PER_PAGE;
      const res = await pdf('long.pdf', pdfOf(pages));
      expect(res.status).toBe(201);
      const expected = Math.ceil((words - WINDOW) / STRIDE) + 1;
      expect(res.body).toMatchObject({ pages, chunk_count: expected, status: 'INDEXED', duplicate: false });

      const rows = await db.query<{ ordinal: number; page: number; text: string }>(
        `SELECT ordinal, page, text FROM retrieval_chunks WHERE document_id = $1 ORDER BY seq`,
        [res.body.document_id],
      );
      expect(rows).toHaveLength(expected);
      rows.forEach((row, k) => {
        const first = k * STRIDE;
        const window = Array.from({ length: Math.min(WINDOW, words - first) }, (_, j) => wordAt(first + j)).join(' ');
        expect(row).toEqual({ ordinal: k, page: Math.floor(first / WORDS_PER_PAGE) + 1, text: window });
      });

      // the last page's words are found: the document is searchable to its end
      const found = await h.json('POST', '/collections/manuals/query', who.engineer, { question: wordAt(words - 1), top_k: 1 });
      expect(found.status).toBe(200);
      expect(found.body.chunks[0]).toMatchObject({ document_id: res.body.document_id, page: pages });
      expect(await readdir(spool)).toEqual([]);
    });

    it('leaves no document, no chunk and no file when the database refuses a chunk late in the document', async () => {
      const before = await counts();
      // the real database refuses one row near the end (a trigger, as a full disk or a constraint would)
      await db.exec(`
        CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.text LIKE '%poison%' THEN RAISE EXCEPTION 'chunk refused'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_poison BEFORE INSERT ON retrieval_chunks FOR EACH ROW EXECUTE FUNCTION refuse_poison();`);
      // one written in several statements (a transaction), and one short enough for a single statement
      const poisoned = pdfOf(20, (i) => (i === 19 * WORDS_PER_PAGE + 7 ? 'poison' : `q${wordAt(i)}`));
      const short = pdfOf(2, (i) => (i === WORDS_PER_PAGE + 300 ? 'poison' : `s${wordAt(i)}`));
      try {
        for (const [name, bytes] of [
          ['poisoned.pdf', poisoned],
          ['short.pdf', short],
        ] as const) {
          const refused = await pdf(name, bytes);
          expect(refused.status, name).toBe(500);
          expect(await counts()).toEqual(before);
        }
        const stray = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM retrieval_chunks WHERE collection_slug = 'manuals' AND (text LIKE '%qp1w%' OR text LIKE '%sp1w%')`,
        );
        expect(stray[0]!.n).toBe(0);
        expect(await readdir(spool)).toEqual([]);
      } finally {
        await db.exec('DROP TRIGGER refuse_poison ON retrieval_chunks; DROP FUNCTION refuse_poison()');
      }

      // nothing of it stayed: the same bytes are a new document, not a duplicate
      const again = await pdf('poisoned.pdf', poisoned);
      expect(again.status).toBe(201);
      expect(again.body.duplicate).toBe(false);
      expect(await counts()).toEqual({ documents: before.documents + 1, chunks: before.chunks + again.body.chunk_count });
    });

    it('answers bytes it holds as a duplicate even when extracting them would now be refused, and a refused file leaves nothing', async () => {
      const manual = await docx([{ paragraph: 'Torque the valve to twelve newton metres before the pressure test.' }]);
      const stored = await h.upload('manuals', who.engineer, { name: 'valve.docx', type: officeTypes.docx, bytes: manual });
      expect(stored.status).toBe(201);
      const before = await counts();

      // a replica whose extraction limit refuses every package: the lookup still decides first
      const strict = await retrievalHarness(db, {
        env: { SVC_RAG_MAX_EXTRACTED_BYTES: '64', SVC_UPLOAD_TMP_DIR: spool },
      });
      try {
        const again = await strict.upload('manuals', who.engineer, { name: 'valve-copy.docx', type: officeTypes.docx, bytes: manual });
        expect(again.status).toBe(200);
        expect(again.body).toMatchObject({ document_id: stored.body.document_id, filename: 'valve.docx', duplicate: true });

        const other = await docx([{ paragraph: 'Bleed the line before the valve is opened.' }]);
        const refused = await strict.upload('manuals', who.engineer, { name: 'bleed.docx', type: officeTypes.docx, bytes: other });
        expect(refused.status).toBe(413);
        expect(await counts()).toEqual(before);
        expect(await readdir(spool)).toEqual([]);
      } finally {
        await strict.close();
      }
    });
  });
}
