import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CODE_HEADER,
  configureVectorThreads,
  createStoredIndex,
  createVectorIndex,
  encodeRow,
  type Hit,
  unitRow,
  type VectorIndex,
} from '../../src/retrieval/vector-index/index.ts';
import { loadRetrievalConfig } from '../../src/retrieval/config.ts';
import { vectorThreadWorkers } from '../../src/retrieval/vector-index/parallel.ts';
import { gaussians } from '../support/random-vectors.ts';

// A large index splits its pass across threads (a worker per extra core). The split must change nothing: the same
// ids, scores and order of ties as the pass on one thread, for any number of rows and any k; it is used only from
// the threshold on; and a worker that is gone or late leaves the answer to the caller's thread.

const DIM = 768;
const ONE_THREAD = { minRows: Number.MAX_SAFE_INTEGER };
const SPLIT = { minRows: 0 };

async function indexOf(vectors: readonly Float32Array[], dim = DIM) {
  const index = await createVectorIndex(dim);
  index.add(
    vectors.map((_, row) => `id${row}`),
    vectors,
  );
  return index;
}

/** Searches until a pass was split (a new worker takes a moment to start), so the next ones can be. */
async function untilSplit(index: VectorIndex, query: Float32Array) {
  const before = index.stats.split;
  await expect.poll(() => (index.search(query, 1), index.stats.split), { timeout: 20_000, interval: 20 }).toBeGreaterThan(before);
}

/** Each query and k, on one thread and split: the same hits; and every split search was split. */
function expectSameSplit(index: VectorIndex, queries: readonly Float32Array[], ks: readonly number[]) {
  for (const query of queries) {
    for (const k of ks) {
      configureVectorThreads(ONE_THREAD);
      const one: Hit[] = index.search(query, k);
      configureVectorThreads(SPLIT);
      const before = index.stats.split;
      expect(index.search(query, k)).toEqual(one);
      expect(index.stats.split).toBe(before + 1);
    }
  }
}

beforeEach(() => {
  configureVectorThreads({ threads: 2, minRows: 0, waitMs: 5_000 });
});

afterAll(() => {
  configureVectorThreads({ threads: 1 });
});

describe('vector index split across threads: the same answer as one thread', () => {
  it.each([8, 13, 1003, 4097])('with %i rows, for k up to every row', async (n) => {
    const vectors = gaussians(n, n);
    const index = await indexOf(vectors);
    await untilSplit(index, vectors[0]!);
    const queries = [...gaussians(4, n + 1), vectors[n - 1]!, Float32Array.from(vectors[1]!, (x) => -x)];
    // k above half the rows: more than a range holds; k = n: every row
    expectSameSplit(
      index,
      queries,
      [1, 5, 10, Math.ceil(n / 2) + 1, n].filter((k) => k <= n),
    );
  });

  it('keeps the order of ties that straddle the split, and of ties within each range', async () => {
    const base = gaussians(1, 5)[0]!;
    // 600 rows: a range of 300 each; 100 copies of one vector on both sides of the boundary, and more at the end
    const vectors = [...gaussians(250, 6), ...Array.from({ length: 100 }, () => Float32Array.from(base)), ...gaussians(200, 7)];
    vectors.push(...Array.from({ length: 50 }, () => Float32Array.from(base))); // in the second range only
    const index = await indexOf(vectors);
    await untilSplit(index, vectors[0]!);
    expectSameSplit(index, [base, ...gaussians(3, 8)], [1, 10, 50, 149, 150, 151]);
    configureVectorThreads(SPLIT);
    expect(index.search(base, 150).map((h) => h.id)).toEqual([
      ...Array.from({ length: 100 }, (_, i) => `id${250 + i}`),
      ...Array.from({ length: 50 }, (_, i) => `id${550 + i}`),
    ]);
  });

  it('answers the same in a collection copy (int8 in memory, float rows read back)', async () => {
    const vectors = gaussians(2001, 11);
    const stored = await createStoredIndex(DIM);
    const scratch = new Float64Array(DIM);
    vectors.forEach((v, row) => {
      stored.addCode(row * 2 + 1, encodeRow(unitRow(v, DIM, scratch, new Float32Array(DIM)), DIM, new Uint8Array(CODE_HEADER + DIM)));
    });
    const fetch = async (seqs: number[]) => seqs.map((seq) => ({ seq, vector: vectors[(seq - 1) / 2]!, item: (seq - 1) / 2 }));
    const queries = [...gaussians(4, 12), vectors[2000]!];
    await expect
      .poll(async () => (await stored.search(queries[0]!, 1, fetch), stored.stats.split), { timeout: 20_000, interval: 20 })
      .toBeGreaterThan(0);
    for (const query of queries) {
      for (const k of [1, 10, 50, 1001]) {
        configureVectorThreads(ONE_THREAD);
        const fetchedBefore = stored.stats.fetched;
        const one = await stored.search(query, k, fetch);
        const readByOne = stored.stats.fetched - fetchedBefore;
        const before = stored.stats;
        configureVectorThreads(SPLIT);
        expect(await stored.search(query, k, fetch)).toEqual(one);
        expect(stored.stats.split).toBe(before.split + 1);
        expect(stored.stats.fetched - before.fetched).toBe(readByOne); // the same candidates, read back alike
      }
    }
  });
});

describe('when a pass is split', () => {
  it('only from the threshold on, and never with one thread', async () => {
    configureVectorThreads({ threads: 2, minRows: 400 });
    const vectors = gaussians(400, 21);
    const small = await indexOf(vectors.slice(0, 399));
    const large = await indexOf(vectors);
    await untilSplit(large, vectors[0]!);
    for (const query of gaussians(5, 22)) {
      small.search(query, 10);
      large.search(query, 10);
    }
    expect(small.stats).toMatchObject({ searches: 5, split: 0 });
    expect(large.stats.split).toBeGreaterThanOrEqual(6); // the five, and the one that found the worker up
    configureVectorThreads({ threads: 1 });
    const before = large.stats.split;
    large.search(vectors[3]!, 10);
    expect(large.stats.split).toBe(before);
    expect(vectorThreadWorkers()).toHaveLength(0);
  });

  it('falls back to the caller’s thread, with the same answer, when a worker is gone or does not answer', async () => {
    const vectors = gaussians(3000, 31);
    const index = await indexOf(vectors);
    await untilSplit(index, vectors[0]!);
    const queries = gaussians(3, 32);
    configureVectorThreads(ONE_THREAD);
    const want = queries.map((q) => index.search(q, 10));

    // stopped under the pool's feet: its job is never taken, the caller gives up after waitMs and passes the range
    configureVectorThreads({ ...SPLIT, waitMs: 200 });
    const [worker] = vectorThreadWorkers();
    void worker!.terminate();
    let before = index.stats.split;
    expect(index.search(queries[0]!, 10)).toEqual(want[0]);
    expect(index.stats.split).toBe(before);

    // the worker given up is replaced; once the new one is up, passes are split again, with the same answers
    await untilSplit(index, vectors[0]!);
    expect(vectorThreadWorkers()[0]).not.toBe(worker);
    before = index.stats.split;
    expect(queries.map((q) => index.search(q, 10))).toEqual(want);
    expect(index.stats.split).toBe(before + queries.length);

    // gone before the search: not used at all
    const [next] = vectorThreadWorkers();
    await next!.terminate();
    before = index.stats.split;
    expect(queries.map((q) => index.search(q, 10))).toEqual(want);
    expect(index.stats.split).toBe(before);
  });
});

describe('thread settings', () => {
  it('default to one thread per core from 50 000 chunks, and refuse what is not a count', () => {
    expect(loadRetrievalConfig({})).toMatchObject({ RAG_VECTOR_THREADS: 0, RAG_VECTOR_PARALLEL_MIN_CHUNKS: 50_000 });
    expect(loadRetrievalConfig({ SVC_RAG_VECTOR_THREADS: '2', SVC_RAG_VECTOR_PARALLEL_MIN_CHUNKS: '1000' })).toMatchObject({
      RAG_VECTOR_THREADS: 2,
      RAG_VECTOR_PARALLEL_MIN_CHUNKS: 1000,
    });
    expect(() => loadRetrievalConfig({ SVC_RAG_VECTOR_THREADS: '-1' })).toThrow(/SVC_RAG_VECTOR_THREADS/);
    expect(() => loadRetrievalConfig({ SVC_RAG_VECTOR_PARALLEL_MIN_CHUNKS: 'many' })).toThrow(/SVC_RAG_VECTOR_PARALLEL_MIN_CHUNKS/);
  });
});
