import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';
import type { Database } from '../../src/platform/db/index.ts';
import type { Embedder } from '../../src/platform/gateway/index.ts';
import { eventually } from '../support/policy-bundles.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';

// SVC_RAG_PRUNING_FROM_CHUNKS: 20 000 chunks by default, so this copy of 80 loads with no clusters; set lower, a copy
// of that many chunks starts building them (on a worker thread) once it loads, and the answers stay the ones a copy
// without clusters gives. (The index's own proofs: retrieval-pruning-index.test.ts and -background.test.ts.)

const DIM = 16;
const WORDS = 400;

/** Vectors around four centres: embeddings with clusters, as the index is meant for. */
const clustered = (text: string): number[] => {
  const seed = createHash('sha256').update(text).digest();
  const centre = seed[0]! % 4;
  const v = Array.from({ length: DIM }, (_, i) => (i % 4 === centre ? 4 : 0) + (seed.readInt8(1 + (i % 31)) / 128) * 0.3);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const embedder: Embedder = { model: 'clustered', dim: DIM, offline: true, embed: async (texts) => texts.map(clustered) };
const text = Array.from({ length: WORDS }, (_, i) => `word${i}`).join(' ');

describe('the pruning index setting (SVC_RAG_PRUNING_FROM_CHUNKS)', () => {
  let db: Database;
  const harnesses: RetrievalHarness[] = [];
  const replica = async (env: Record<string, string>) => {
    const h = await retrievalHarness(db, {
      embedder,
      // a chunk of five words, none shared: 80 chunks
      env: { SVC_EMBED_DIM: String(DIM), SVC_CHUNK_SIZE_TOKENS: '5', SVC_CHUNK_OVERLAP_TOKENS: '0', ...env },
    });
    harnesses.push(h);
    return h;
  };
  const ask = (h: RetrievalHarness, question: string) =>
    h.json('POST', '/collections/words/query', who.admin, { question, top_k: 7, mode: 'dense' });

  beforeAll(async () => {
    db = await openPglite({});
    const writer = await replica({});
    expect((await writer.json('POST', '/collections', who.engineer, { slug: 'words', name: 'words', allowed_roles: [] })).status).toBe(201);
    const up = await writer.upload('words', who.engineer, { name: 'words.txt', bytes: new TextEncoder().encode(text) });
    expect(up.status).toBe(201);
  });
  afterAll(async () => {
    for (const h of harnesses) await h.close();
    await db.close();
  });

  it('builds no clusters by default, and builds them from the set number of chunks with the same answers', async () => {
    const plain = await replica({});
    const pruned = await replica({ SVC_RAG_PRUNING_FROM_CHUNKS: '20' });
    for (const question of ['word3 word17', 'word250', 'word399 word1']) {
      const [a, b] = [await ask(plain, question), await ask(pruned, question)];
      expect(a.status).toBe(200);
      expect(b.body.chunks).toEqual(a.body.chunks);
    }
    expect(plain.deps.indexes.pruning('words')?.state).toBe('none');
    const built = pruned.deps.indexes.pruning('words');
    expect(built?.state).not.toBe('none');
    expect(built?.rows).toBeGreaterThanOrEqual(20);
  });

  it('reads the rows into the clusters’ finer code where the kept floats cannot hold them all, with the same answers, and the candidates’ vectors from disk', async () => {
    // 960 chunks (four clusters of 240: ten leaves), so the clusters prune
    const words = Array.from({ length: 4800 }, (_, i) => `term${i}`).join(' ');
    const writer = harnesses[0]!;
    expect((await writer.json('POST', '/collections', who.engineer, { slug: 'terms', name: 'terms', allowed_roles: [] })).status).toBe(201);
    expect((await writer.upload('terms', who.engineer, { name: 'terms.txt', bytes: new TextEncoder().encode(words) })).status).toBe(201);
    const plain = await replica({});
    // 960 float rows would take 215 KB of the budget, their finer code 28 KB: the copy is not warmed whole, it is coded
    // (and its statements that read stored vectors back are counted)
    const vectorReads: string[] = [];
    const counted = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop === 'query')
          return (text: string, params?: readonly unknown[]) => {
            if (text.includes('vector_send')) vectorReads.push(text);
            return target.query(text, params);
          };
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const coded = await retrievalHarness(counted, {
      embedder,
      env: {
        SVC_EMBED_DIM: String(DIM),
        SVC_CHUNK_SIZE_TOKENS: '5',
        SVC_CHUNK_OVERLAP_TOKENS: '0',
        SVC_RAG_PRUNING_FROM_CHUNKS: '20',
        SVC_RAG_FLOAT_CACHE_BYTES: '40000',
      },
    });
    harnesses.push(coded);
    const askTerms = (h: RetrievalHarness, question: string) =>
      h.json('POST', '/collections/terms/query', who.admin, { question, top_k: 7, mode: 'dense' });
    expect((await askTerms(coded, 'term5')).status).toBe(200);
    await eventually(async () => coded.deps.indexes.pruning('terms')?.state === 'built');
    await eventually(async () => coded.deps.indexes.pruning('terms')?.refined === 960);
    expect(coded.deps.indexes.floatBytes()).toBeLessThanOrEqual(40000);
    // the finer code's read also wrote every vector to a local file: questions never asked read none from the database
    vectorReads.length = 0;
    for (const question of ['term3 term17', 'term250', 'term4799 term1', 'term77', 'term1200 term3000']) {
      const [a, b] = [await askTerms(plain, question), await askTerms(coded, question)];
      expect(a.status).toBe(200);
      expect(a.body.chunks).toHaveLength(7);
      expect(b.body.chunks).toEqual(a.body.chunks);
    }
    expect(vectorReads).toEqual([]);
    // a document appended after the build: the copy grows past the room its load reserved, and its chunk is found
    const fresh = 'fresh0 fresh1 fresh2 fresh3 fresh4';
    expect((await writer.upload('terms', who.engineer, { name: 'fresh.txt', bytes: new TextEncoder().encode(fresh) })).status).toBe(201);
    for (const question of [fresh, 'term3 term17', 'term4799 term1']) {
      const [a, b] = [await askTerms(plain, question), await askTerms(coded, question)];
      expect(a.body.chunks).toHaveLength(7);
      expect(b.body.chunks).toEqual(a.body.chunks);
    }
    expect((await askTerms(coded, fresh)).body.chunks[0].text).toBe(fresh);
  });
});
