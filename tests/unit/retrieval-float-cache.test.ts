import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';
import type { Embedder } from '../../src/platform/gateway/index.ts';
import { recordingDatabase } from '../support/counting-sql.ts';
import { eventually } from '../support/policy-bundles.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { folderPlace } from '../support/watched-places.ts';

// Hybrid's exact re-rank keeps the float rows it reads (SVC_RAG_FLOAT_CACHE_BYTES): a repeated question reads no
// vector from the database, answers exactly as a replica keeping none does, and never answers from a row the
// collection no longer holds. Documents arrive, change and go through a watched folder, scanned by a replica of
// its own, so the replicas asking see them only through the database.

const DIM = 16;
const FILES = 24;

/** A unit vector from the text's hash: deterministic, and different for every chunk. */
const noise = (text: string): number[] => {
  const seed = createHash('sha256').update(text).digest();
  const v = Array.from({ length: DIM }, (_, i) => seed.readInt8(i) + 0.5);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const embedder: Embedder = { model: 'noise', dim: DIM, offline: true, embed: async (texts) => texts.map(noise) };
const body = (i: number) =>
  `Pump P-${i} valve ${i % 3 === 0 ? 'maintenance' : 'inspection'} note ${i}: check the seals every ${i + 1} weeks.`;

type Chunk = { chunk_id: string; filename: string; score: number; dense_rank: number | null; keyword_rank: number | null };

describe('float rows kept for the hybrid re-rank (SVC_RAG_FLOAT_CACHE_BYTES)', () => {
  let place: Awaited<ReturnType<typeof folderPlace>>;
  let db: ReturnType<typeof recordingDatabase>;
  let source: Awaited<ReturnType<Awaited<ReturnType<typeof folderPlace>>['source']>>;
  const harnesses: RetrievalHarness[] = [];
  let kept: RetrievalHarness; // the default budget
  let none: RetrievalHarness; // budget 0
  const replica = async (env: Record<string, string>, watch = false) => {
    const h = await retrievalHarness(db, {
      embedder,
      env: { ...place.env, SVC_EMBED_DIM: String(DIM), ...env },
      ...(watch ? { watch: {} } : {}),
    });
    harnesses.push(h);
    return h;
  };
  const filenames = async () =>
    ((await kept.json('GET', '/collections/pumps/documents', who.admin)).body.documents as { filename: string }[]).map((d) => d.filename);

  beforeAll(async () => {
    place = await folderPlace();
    db = recordingDatabase(await openPglite({}));
    const scanner = await replica({ SVC_WATCH_POLL_SECONDS: '1' }, true);
    kept = await replica({});
    none = await replica({ SVC_RAG_FLOAT_CACHE_BYTES: '0' });
    source = await place.source('pumps');
    for (let i = 0; i < FILES; i++) await source.put(`p${i}.txt`, body(i));
    const created = await scanner.json('POST', '/collections', who.engineer, {
      slug: 'pumps',
      name: 'pumps',
      allowed_roles: [],
      watch: { uri: source.uri, interval_seconds: 1 },
    });
    expect(created.status).toBe(201);
    await eventually(async () => (await filenames()).length === FILES);
  });
  afterAll(async () => {
    for (const h of harnesses) await h.close();
    await db?.close();
    await place?.cleanup();
  });

  /** The answer and the statements that read stored vectors while it was computed. */
  async function ask(h: RetrievalHarness, question: string): Promise<{ chunks: Chunk[]; vectorReads: number }> {
    const from = db.statements.length;
    const res = await h.json('POST', '/collections/pumps/query', who.user, { question, top_k: 5, mode: 'hybrid' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const vectorReads = db.statements.slice(from).filter((s) => s.includes('vector_send(')).length;
    return { chunks: res.body.chunks, vectorReads };
  }
  const ranking = (chunks: Chunk[]) => chunks.map((c) => [c.chunk_id, c.score, c.dense_rank, c.keyword_rank]);

  it('answers a repeated question from the kept rows, reading no vector, exactly as a replica keeping none', async () => {
    const question = 'pump valve maintenance';
    const first = await ask(kept, question);
    expect(first.chunks).toHaveLength(5);
    expect(first.vectorReads).toBeGreaterThan(0);
    expect(kept.deps.indexes.floatBytes()).toBeGreaterThan(0);

    const again = await ask(kept, question);
    expect(again.vectorReads).toBe(0);
    expect(ranking(again.chunks)).toEqual(ranking(first.chunks));

    for (let i = 0; i < 2; i++) {
      const plain = await ask(none, question);
      expect(plain.vectorReads).toBeGreaterThan(0);
      expect(ranking(plain.chunks)).toEqual(ranking(first.chunks));
    }
    expect(none.deps.indexes.floatBytes()).toBe(0);
  });

  it('warms a new copy that fits the budget: a question never asked before re-ranks from memory', async () => {
    // two candidates a list, so one question reads only a few rows itself; `kept` has read every row (above)
    const warm = await replica({ SVC_HYBRID_CANDIDATES: '2' });
    const first = await ask(warm, 'seals every week');
    expect(first.chunks.length).toBeGreaterThan(0);
    await eventually(async () => warm.deps.indexes.floatBytes() === kept.deps.indexes.floatBytes());
    const unseen = await ask(warm, 'inspection note for pump P-7');
    expect(unseen.vectorReads).toBe(0);
    const cold = await replica({ SVC_HYBRID_CANDIDATES: '2', SVC_RAG_FLOAT_CACHE_BYTES: '0' });
    expect(ranking(unseen.chunks)).toEqual(ranking((await ask(cold, 'inspection note for pump P-7')).chunks));
  });

  it('never answers from a kept row whose document was replaced or deleted since', async () => {
    const question = 'pump valve maintenance';
    const before = (await ask(kept, question)).chunks;
    const keptBefore = kept.deps.indexes.floatBytes(); // every row: the re-rank read them all
    const [changed, gone] = [before[0]!.filename, before[1]!.filename];
    await source.put(changed, 'Pump P-99 valve maintenance replaced: new seals fitted.');
    await source.remove(gone);
    await eventually(async () => {
      const names = await filenames();
      const hits = (await kept.json('POST', '/collections/pumps/query', who.user, { question: 'P-99', mode: 'keyword' })).body.chunks;
      return !names.includes(gone) && hits.length === 1;
    });

    const after = await ask(kept, question);
    const oldIds = new Set(before.slice(0, 2).map((c) => c.chunk_id));
    expect(after.chunks.filter((c) => oldIds.has(c.chunk_id))).toEqual([]);
    expect(after.chunks.map((c) => c.filename)).not.toContain(gone);
    expect(ranking(after.chunks)).toEqual(ranking((await ask(none, question)).chunks));
    // the rebuilt copy (one chunk fewer) kept its rows anew, and the one it replaced gave its bytes back
    expect((await ask(kept, question)).vectorReads).toBe(0);
    expect(kept.deps.indexes.floatBytes()).toBeGreaterThan(0);
    expect(kept.deps.indexes.floatBytes()).toBeLessThan(keptBefore);
  });

  it('stops keeping rows once a small budget is spent, with the same answers', async () => {
    const budget = 4 * DIM * 4 + 1000; // a few rows at most
    const small = await replica({ SVC_RAG_FLOAT_CACHE_BYTES: String(budget) });
    for (const question of ['pump valve maintenance', 'seals inspection weeks', 'pump valve maintenance']) {
      const answer = await ask(small, question);
      expect(answer.vectorReads, question).toBeGreaterThan(0);
      expect(ranking(answer.chunks)).toEqual(ranking((await ask(none, question)).chunks));
      expect(small.deps.indexes.floatBytes()).toBeGreaterThan(0);
      expect(small.deps.indexes.floatBytes()).toBeLessThanOrEqual(budget);
    }
    const full = small.deps.indexes.floatBytes();
    await ask(small, 'check the seals');
    expect(small.deps.indexes.floatBytes()).toBe(full);
  });

  it('reads a dense question’s candidates without their text, then only the winners’ text: the same answer as with kept rows', async () => {
    const question = 'seals fitted every week';
    const dense = async (h: RetrievalHarness) => {
      const from = db.statements.length;
      const res = await h.json('POST', '/collections/pumps/query', who.user, { question, top_k: 3, mode: 'dense' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const read = db.statements.slice(from);
      return {
        chunks: res.body.chunks as (Chunk & { text: string; page: number; document_id: string })[],
        withText: read.filter((s) => s.includes('vector_send(') && s.includes('k.text')).length,
        vectorsAlone: read.filter((s) => s.includes('vector_send(') && !s.includes('k.text')).length,
        textAlone: read.filter((s) => s.includes('jsonb_array_elements_text')).length,
      };
    };
    // no rows kept: the candidates' vectors in one read, then the text of the three that rank
    const plain = await dense(none);
    expect(plain).toMatchObject({ withText: 0, vectorsAlone: 1, textAlone: 1 });
    expect(plain.chunks).toHaveLength(3);
    expect(plain.chunks.every((c) => c.text.length > 0 && c.filename.endsWith('.txt'))).toBe(true);
    // rows kept: no vector read, the winners' text read alone; the same chunks, text and scores
    await dense(kept);
    const again = await dense(kept);
    expect(again).toMatchObject({ withText: 0, vectorsAlone: 0, textAlone: 1 });
    expect(again.chunks).toEqual(plain.chunks);
  });

  it('gives the kept bytes back when the collection is deleted', async () => {
    await ask(kept, 'pump valve maintenance');
    expect(kept.deps.indexes.floatBytes()).toBeGreaterThan(0);
    expect((await kept.json('DELETE', '/collections/pumps', who.admin)).status).toBe(200);
    expect(kept.deps.indexes.floatBytes()).toBe(0);
  });
});
