import { describe, expect, it } from 'vitest';
import {
  CODE_HEADER,
  createStoredIndex,
  createVectorIndex,
  encodeRow,
  unitRow,
  type StoredIndex,
} from '../../src/retrieval/vector-index/index.ts';
import { gaussians, mulberry32 } from '../support/random-vectors.ts';

// A copy grouped into clusters (vector-index/clusters.ts) scans only the clusters whose bound reaches the k-th best
// so far. Its answers must be the full scan's: the same rows, in the same order, with the same scores, ties in
// sequence order; and where the clusters cannot prune (uniform random rows, a small copy) nothing is built and every
// search is a full scan.

const DIM = 768;

/** `count` random unit centres (seeded by `count`). */
const centresOf = (count: number) =>
  gaussians(count, 1000 + count).map((c) => {
    const length = Math.hypot(...c);
    return c.map((x) => x / length);
  });

/** `n` rows around `centres` random unit centres, noise of length about 0.5 (the benchmark's Gaussian mixture). */
function mixture(n: number, centres: number, seed: number): Float32Array[] {
  const next = mulberry32(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  const units = centresOf(centres);
  const noise = 0.5 / Math.sqrt(DIM);
  return Array.from({ length: n }, () => Float32Array.from(units[Math.floor(next() * centres)]!, (x) => x + noise * gauss()));
}

/**
 * A copy of the first `rows` of `vectors` (seq = 3·row + 1) that builds its clusters from 1000 rows; `gone` rows are
 * read back as deleted.
 */
async function copyOf(vectors: readonly Float32Array[], gone: ReadonlySet<number> = new Set(), rows = vectors.length, dim = DIM) {
  const index = await createStoredIndex(dim, { pruneFrom: 1000 });
  add(index, vectors.slice(0, rows), 0, dim);
  const fetch = async (seqs: number[]) =>
    seqs.flatMap((seq) => {
      const row = (seq - 1) / 3;
      return gone.has(row) ? [] : [{ seq, vector: vectors[row]!, item: `id${row}` }];
    });
  return { index, fetch };
}

function add(index: StoredIndex, vectors: readonly Float32Array[], from: number, dim = DIM) {
  const scratch = new Float64Array(dim);
  for (let row = from; row < vectors.length; row++) {
    const code = encodeRow(unitRow(vectors[row]!, dim, scratch, new Float32Array(dim)), dim, new Uint8Array(CODE_HEADER + dim));
    index.addCode(3 * row + 1, code);
  }
}

/** Every query at several k: the pruned answer equals the exhaustive one exactly (ids, order, scores). */
async function expectFullScanAnswers(copy: Awaited<ReturnType<typeof copyOf>>, queries: readonly Float32Array[], ks = [1, 10, 50]) {
  for (const q of queries) {
    for (const k of ks) {
      const pruned = await copy.index.search(q, k, copy.fetch);
      const full = await copy.index.search(q, k, copy.fetch, { exhaustive: true });
      expect(pruned).toEqual(full);
    }
  }
}

describe('the pruning index of a copy', () => {
  it('answers exactly as the full scan and the all-in-memory index on clustered rows, scanning a small share', async () => {
    const vectors = mixture(6000, 40, 11);
    const copy = await copyOf(vectors);
    expect(copy.index.pruning.state).toBe('none'); // built when the copy has loaded, not before
    const pruning = copy.index.prepare();
    expect(pruning).toMatchObject({ state: 'built', rows: 6000 });
    expect(pruning.leaves).toBeGreaterThan(30);
    expect(pruning.probeShare).toBeLessThan(0.2);

    // between two centres, and k past a cluster's 150 rows: the stop is decided where bounds and scores meet
    const between = mixture(8, 40, 15).map((a, i, all) => Float32Array.from(a, (x, d) => x + all[(i + 1) % all.length]![d]!));
    const queries = [...mixture(12, 40, 12), ...between, vectors[17]!, Float32Array.from(vectors[40]!, (x) => -x), ...gaussians(2, 13)];
    await expectFullScanAnswers(copy, queries, [1, 10, 50, 400]);
    const memory = await createVectorIndex(DIM);
    memory.add(
      vectors.map((_, row) => `id${row}`),
      vectors,
    );
    for (const q of queries.slice(0, 6)) {
      const got = await copy.index.search(q, 10, copy.fetch);
      expect(got.map((h) => ({ id: h.item, score: h.score }))).toEqual(memory.search(q, 10));
    }

    const before = copy.index.stats;
    for (const q of mixture(20, 40, 14)) await copy.index.search(q, 10, copy.fetch);
    const after = copy.index.stats;
    expect(after.fullScans).toBe(before.fullScans);
    expect((after.scanned - before.scanned) / 20).toBeLessThan(0.2 * vectors.length);
  });

  it('is exact in 3 dimensions, where a query can meet a cluster at its radius (the bound is tight)', async () => {
    const vectors = gaussians(4000, 61, 3);
    const copy = await copyOf(vectors, new Set(), vectors.length, 3);
    expect(copy.index.prepare().state).toBe('built');
    // k of half the rows: the floor falls near 0, where clusters at right angles to the query are let go or not
    await expectFullScanAnswers(copy, gaussians(100, 62, 3), [1, 7, 60, 500, 1000, 2000, 3000]);
    const before = copy.index.stats.scanned;
    for (const q of gaussians(20, 63, 3)) await copy.index.search(q, 10, copy.fetch);
    expect((copy.index.stats.scanned - before) / 20).toBeLessThan(0.2 * vectors.length);
  });

  it('keeps sequence order among equal scores although rows are moved into clusters', async () => {
    const vectors = mixture(3000, 30, 21);
    const twin = vectors[5]!;
    for (const row of [2999, 1200, 7, 640]) vectors[row] = Float32Array.from(twin); // ties spread over the copy
    const copy = await copyOf(vectors);
    expect(copy.index.prepare().state).toBe('built');
    const hits = await copy.index.search(twin, 5, copy.fetch);
    expect(hits.map((h) => h.item)).toEqual(['id5', 'id7', 'id640', 'id1200', 'id2999']);
    await expectFullScanAnswers(copy, [twin, ...mixture(6, 30, 22)]);
    // a zero query scores 0 everywhere: the first rows in sequence order, wherever they were moved
    expect((await copy.index.search(new Float32Array(DIM), 3, copy.fetch)).map((h) => h.item)).toEqual(['id0', 'id1', 'id2']);
  });

  it('scans the rows appended since the build, and rebuilds once they pass a quarter of the copy', async () => {
    const vectors = mixture(4000, 20, 31);
    const copy = await copyOf(vectors, new Set(), 3000);
    expect(copy.index.prepare()).toMatchObject({ state: 'built', rows: 3000 });
    add(copy.index, vectors.slice(0, 3500), 3000); // 500 appended: scanned by every search
    expect(copy.index.prepare().rows).toBe(3000);
    await expectFullScanAnswers(copy, [...mixture(8, 20, 32), vectors[3100]!, vectors[3499]!]);
    add(copy.index, vectors, 3500);
    expect(copy.index.prepare()).toMatchObject({ state: 'built', rows: 4000 });
    await expectFullScanAnswers(copy, [...mixture(8, 20, 33), vectors[3999]!]);
  });

  it('finds the rows appended after the build once the copy has grown past the room it was loaded with', async () => {
    // a load reserves room for exactly its rows (indexes.ts), so the first row appended after it grows the store
    const vectors = mixture(3010, 20, 35);
    const index = await createStoredIndex(DIM, { pruneFrom: 1000 });
    index.reserve(3000);
    add(index, vectors.slice(0, 3000), 0);
    expect(index.prepare()).toMatchObject({ state: 'built', rows: 3000 });
    index.reserve(3010);
    add(index, vectors, 3000);
    const fetch = async (seqs: number[]) => seqs.map((seq) => ({ seq, vector: vectors[(seq - 1) / 3]!, item: `id${(seq - 1) / 3}` }));
    for (const q of [vectors[3005]!, vectors[3009]!, ...mixture(4, 20, 36)]) {
      for (const k of [1, 10]) expect(await index.search(q, k, fetch)).toEqual(await index.search(q, k, fetch, { exhaustive: true }));
    }
    expect((await index.search(vectors[3005]!, 1, fetch)).map((h) => h.item)).toEqual(['id3005']);
  });

  it('after deletes: answers as the full scan on a copy rebuilt without them, and leaves out rows gone when read back', async () => {
    const vectors = mixture(3000, 20, 41);
    const deleted = new Set(Array.from({ length: 3000 }, (_, i) => i).filter((i) => i % 7 === 3));
    // a deletion rebuilds the copy from the rows left (indexes.ts): the same rows with their own sequence numbers
    const rebuilt = await createStoredIndex(DIM, { pruneFrom: 1000 });
    const scratch = new Float64Array(DIM);
    vectors.forEach((v, row) => {
      if (deleted.has(row)) return;
      rebuilt.addCode(3 * row + 1, encodeRow(unitRow(v, DIM, scratch, new Float32Array(DIM)), DIM, new Uint8Array(CODE_HEADER + DIM)));
    });
    expect(rebuilt.prepare().state).toBe('built');
    const fetch = async (seqs: number[]) => seqs.map((seq) => ({ seq, vector: vectors[(seq - 1) / 3]!, item: `id${(seq - 1) / 3}` }));
    const queries = [...mixture(8, 20, 42), vectors[3]!, vectors[4]!];
    for (const q of queries) {
      for (const k of [1, 10, 40]) {
        const pruned = await rebuilt.search(q, k, fetch);
        expect(pruned).toEqual(await rebuilt.search(q, k, fetch, { exhaustive: true }));
        expect(pruned.some((h) => deleted.has((h.seq - 1) / 3))).toBe(false);
      }
    }
    // rows deleted after the copy's version was read: the read-back leaves them out, pruned or not
    const stale = await copyOf(vectors, deleted);
    stale.index.prepare();
    await expectFullScanAnswers(stale, queries, [1, 10]);
    expect((await stale.index.search(vectors[3]!, 10, stale.fetch)).map((h) => h.item)).not.toContain('id3');
  });

  it('builds nothing on uniformly random rows or a small copy, and then every search is a full scan', async () => {
    const random = await copyOf(gaussians(3000, 51));
    const pruning = random.index.prepare();
    expect(pruning).toMatchObject({ state: 'useless', leaves: 0, bytes: 0 });
    await expectFullScanAnswers(random, gaussians(4, 52), [10]);
    expect(random.index.stats.fullScans).toBe(random.index.stats.searches);

    const small = await createStoredIndex(DIM); // below the default 20 000 rows
    const vectors = mixture(2000, 20, 53);
    add(small, vectors, 0);
    expect(small.prepare().state).toBe('none');
    const fetch = async (seqs: number[]) => seqs.map((seq) => ({ seq, vector: vectors[(seq - 1) / 3]!, item: seq }));
    await small.search(vectors[1]!, 10, fetch);
    expect(small.stats).toMatchObject({ searches: 1, fullScans: 1, scanned: 2000 });
  });
});
