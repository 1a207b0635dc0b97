import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunkResult } from '../../src/retrieval/query.ts';
import { dropLakeSchema, lakeEnv, lakeTokens, runSchema } from '../support/lake.ts';
import { openFreshPostgres } from '../support/pg.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { trinoStatement, trinoToken } from '../support/trino.ts';

// The lake backend against the real servers: a collection's chunks in an Iceberg table written through Trino as the
// service, ranked by Trino as the caller. The same documents go into a memory collection and a lake collection, and
// every question must come back the same from both: the same chunks (by document, page and text: chunk ids are
// drawn at ingestion, so each backend has its own) in the same order, scores within 1e-6. The integration Trino takes
// hundreds of milliseconds to seconds a statement, so the test asks few.

const enc = (s: string) => new TextEncoder().encode(s);
const words = (topic: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${topic}${i % 9} ${i % 4 ? 'and' : 'the'} term${i % 11}`).join(' ');

const DOCUMENTS = [
  {
    name: 'harbour.txt',
    text: `Lighthouse keepers logged the harbour fog at dawn. ${words('harbour', 30)} The tide gauge read low water at noon.`,
  },
  { name: 'invoices.txt', text: `Invoice INV-2026-0042 is due on 2026-12-31. ${words('billing', 30)} Contact billing about invoices.` },
  // the same words as harbour.txt (other bytes, so another document): its chunks tie with harbour's, exactly
  {
    name: 'harbour-copy.txt',
    text: `Lighthouse keepers logged the harbour fog at dawn.  ${words('harbour', 30)} The tide gauge read low water at noon.\n`,
  },
];
const QUESTIONS = ['harbour fog at dawn', 'when is invoice INV-2026-0042 due', 'tide gauge low water term3'];

type Chunk = ChunkResult;

describe('retrieval on the lake (Trino, Iceberg, MinIO, Postgres)', () => {
  let h: RetrievalHarness;
  let ca: string;
  let cleanup: () => Promise<void>;
  const tables: string[] = [];
  const LAKE_SCHEMA = runSchema();

  beforeAll(async () => {
    const lake = await lakeEnv();
    ca = lake.ca;
    const opened = await openFreshPostgres('lake');
    cleanup = opened.cleanup;
    h = await retrievalHarness(opened.db, {
      env: { ...lake.env, SVC_RAG_LAKE_SCHEMA: LAKE_SCHEMA, SVC_CHUNK_SIZE_TOKENS: '24', SVC_CHUNK_OVERLAP_TOKENS: '4' },
      tokens: await lakeTokens([who.engineer.user, who.analyst.user, who.admin.user]),
    });
    for (const [slug, backend] of [
      ['same-memory', 'memory'],
      ['same-lake', 'lake'],
    ] as const) {
      const created = await h.json('POST', '/collections', who.engineer, { slug, name: slug, allowed_roles: [], backend });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.backend).toBe(backend);
    }
    // the same uploads, in the same order, on both: insertion order breaks ties on both backends
    for (const doc of DOCUMENTS)
      for (const slug of ['same-memory', 'same-lake']) {
        const up = await h.upload(slug, who.engineer, { name: doc.name, bytes: enc(doc.text), type: 'text/plain' });
        expect(up.status, JSON.stringify(up.body)).toBe(201);
      }
    const [row] = await h.db.query<{ chunk_store: string }>(`SELECT chunk_store FROM retrieval_collections WHERE slug = 'same-lake'`);
    tables.push(row!.chunk_store);
  }, 600_000);

  afterAll(async () => {
    // the tables a failed test left behind, and this file's schema
    if (ca) await dropLakeSchema(LAKE_SCHEMA, ca);
    await h?.close();
    await cleanup?.();
  }, 120_000);

  const ask = (slug: string, body: Record<string, unknown>, as = who.engineer) =>
    h.json('POST', `/collections/${slug}/query`, as, { top_k: 8, ...body });

  /** Both answers name the same chunks in the same order, with the same scores and ranks. */
  async function expectSame(body: Record<string, unknown>) {
    const [memory, onLake] = await Promise.all([ask('same-memory', body), ask('same-lake', body)]);
    expect(memory.status, JSON.stringify(memory.body)).toBe(200);
    expect(onLake.status, JSON.stringify(onLake.body)).toBe(200);
    const key = (c: Chunk) => ({
      filename: c.filename,
      page: c.page,
      text: c.text,
      dense_rank: c.dense_rank,
      keyword_rank: c.keyword_rank,
    });
    const m = memory.body.chunks as Chunk[];
    const l = onLake.body.chunks as Chunk[];
    expect(m.length).toBeGreaterThan(0);
    expect(l.map(key)).toEqual(m.map(key));
    for (const [i, c] of l.entries()) expect(Math.abs(c.score - m[i]!.score), `score of chunk ${i}`).toBeLessThanOrEqual(1e-6);
    return { memory: m, lake: l };
  }

  it('stores a lake collection as an Iceberg table: one snapshot for its creation and one a document', async () => {
    const listed = await h.json('GET', '/collections/same-lake', who.engineer);
    expect(listed.body).toMatchObject({ backend: 'lake', document_count: 3 });
    const memory = await h.json('GET', '/collections/same-memory', who.engineer);
    expect(listed.body.chunk_count).toBe(memory.body.chunk_count);
    const snapshots = await trinoStatement(
      `SELECT count(*) FROM ${LAKE_SCHEMA}."${tables[0]}$snapshots"`,
      await trinoToken('svc-service'),
      ca,
    );
    expect(snapshots.error).toBeUndefined();
    expect(snapshots.rows).toEqual([[1 + DOCUMENTS.length]]);
  });

  it('answers dense questions exactly as the memory backend does, ties in the same order', async () => {
    for (const question of QUESTIONS) {
      const { lake: chunks } = await expectSame({ question, mode: 'dense' });
      expect(chunks.every((c) => c.dense_rank !== null && c.keyword_rank === null)).toBe(true);
    }
    // harbour.txt and its copy hold the same chunks: equal scores, the earlier upload first on both backends
    const { lake: chunks } = await expectSame({ question: QUESTIONS[0], mode: 'dense', top_k: 4 });
    expect(chunks[0]!.score).toBe(chunks[1]!.score);
    expect(chunks.slice(0, 2).map((c) => c.filename)).toEqual(['harbour.txt', 'harbour-copy.txt']);
  });

  it('answers keyword and hybrid questions as the memory backend does', async () => {
    for (const question of QUESTIONS) {
      await expectSame({ question, mode: 'keyword' });
      const { lake: chunks } = await expectSame({ question, mode: 'hybrid' });
      expect(chunks.some((c) => c.dense_rank !== null && c.keyword_rank !== null)).toBe(true);
    }
  });

  it('ranks only the documents a filter keeps, on the lake as in memory', async () => {
    const docs = async (slug: string) => (await h.json('GET', `/collections/${slug}/documents`, who.engineer)).body.documents;
    const [m, l] = await Promise.all([docs('same-memory'), docs('same-lake')]);
    const idOf = (list: { filename: string; document_id: string }[], name: string) => list.find((d) => d.filename === name)!.document_id;
    const [memory, onLake] = await Promise.all([
      ask('same-memory', { question: QUESTIONS[2], mode: 'dense', filter: { document_ids: [idOf(m, 'invoices.txt')] } }),
      ask('same-lake', { question: QUESTIONS[2], mode: 'dense', filter: { document_ids: [idOf(l, 'invoices.txt')] } }),
    ]);
    expect(onLake.body.chunks.map((c: Chunk) => c.text)).toEqual(memory.body.chunks.map((c: Chunk) => c.text));
    expect(new Set(onLake.body.chunks.map((c: Chunk) => c.filename))).toEqual(new Set(['invoices.txt']));
    // a citation's page: the same chunks' text, in order, from the table
    const page = async (slug: string, list: typeof m) =>
      (await h.json('GET', `/collections/${slug}/documents/${idOf(list, 'invoices.txt')}/pages/1`, who.engineer)).body;
    const [pm, pl] = await Promise.all([page('same-memory', m), page('same-lake', l)]);
    expect(pl.chunks.length).toBeGreaterThan(1);
    expect(pl.chunks.map((c: { text: string }) => c.text)).toEqual(pm.chunks.map((c: { text: string }) => c.text));
  });

  it("refuses a caller Trino's rules keep off the lake with 403 naming them, after svc's policy let them query", async () => {
    const res = await ask('same-lake', { question: QUESTIONS[0], mode: 'dense' }, who.analyst);
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/Trino refused to read the lake as ana/);
    expect(res.body.detail).toMatch(/Cannot access catalog iceberg/);
    // the memory collection answers the same caller
    expect((await ask('same-memory', { question: QUESTIONS[0], mode: 'dense' }, who.analyst)).status).toBe(200);
  });

  it('refuses a lake question without the caller token with 401 (Trino runs it as the caller)', async () => {
    const res = await h.app.request('/collections/same-lake/query', {
      method: 'POST',
      headers: { 'X-User-Id': 'eve', 'X-User-Role': 'svc-engineer', 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: 'harbour', mode: 'dense' }),
    });
    expect(res.status).toBe(401);
    expect((await res.json()).detail).toMatch(/X-User-Token/);
  });

  it('re-indexes a document on the lake as in memory, then deletes one row by row, then the collection with its table', async () => {
    const docs = async (slug: string) => (await h.json('GET', `/collections/${slug}/documents`, who.engineer)).body.documents;
    for (const slug of ['same-memory', 'same-lake']) {
      const invoices = (await docs(slug)).find((d: { filename: string }) => d.filename === 'invoices.txt');
      const again = await h.json('POST', `/collections/${slug}/documents/${invoices.document_id}/reindex`, who.engineer);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
    }
    // its chunks were replaced: new ids and a later place in insertion order, on both
    await expectSame({ question: QUESTIONS[1], mode: 'dense' });

    for (const slug of ['same-memory', 'same-lake']) {
      const copy = (await docs(slug)).find((d: { filename: string }) => d.filename === 'harbour-copy.txt');
      const gone = await h.json('DELETE', `/collections/${slug}/documents/${copy.document_id}`, who.engineer);
      expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    }
    const { lake: chunks } = await expectSame({ question: QUESTIONS[0], mode: 'dense' });
    expect(chunks.some((c) => c.filename === 'harbour-copy.txt')).toBe(false);

    expect((await h.json('DELETE', '/collections/same-lake', who.engineer)).status).toBe(200);
    const left = await trinoStatement(
      `SELECT count(*) FROM iceberg.information_schema.tables WHERE table_schema = '${LAKE_SCHEMA.split('.')[1]}' AND table_name = '${tables[0]}'`,
      await trinoToken('svc-service'),
      ca,
    );
    expect(left.rows).toEqual([[0]]);
  });
});
