import { describe, expect, it } from 'vitest';
import { CODE_HEADER, createStoredIndex, encodeRow, unitRow, type StoredIndex } from '../../src/retrieval/vector-index/index.ts';
import { gaussians, mulberry32 } from '../support/random-vectors.ts';

// A clustered copy's finer code (vector-index/refine.ts): once the caller hands it the rows' vectors, a search reads
// back fewer candidates, and its answers stay the full scan's: the same rows, order and scores, ties in sequence
// order; rows without the code (not handed over yet, or appended since the build) keep the int8 bound.

const DIM = 768;

function mixture(n: number, centres: number, seed: number, dim = DIM): Float32Array[] {
  const next = mulberry32(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  const units = gaussians(centres, 1000 + centres, dim).map((c) => {
    const length = Math.hypot(...c);
    return c.map((x) => x / length);
  });
  const noise = 0.5 / Math.sqrt(dim);
  return Array.from({ length: n }, () => Float32Array.from(units[Math.floor(next() * centres)]!, (x) => x + noise * gauss()));
}

/** A copy of `vectors` (seq = 3·row + 1) building its clusters from 1000 rows, and its read-back counting rows. */
async function copyOf(vectors: readonly Float32Array[], dim = DIM) {
  const index = await createStoredIndex(dim, { pruneFrom: 1000 });
  add(index, vectors, 0, vectors.length, dim);
  const fetch = async (seqs: number[]) => seqs.map((seq) => ({ seq, vector: vectors[(seq - 1) / 3]!, item: `id${(seq - 1) / 3}` }));
  return { index, fetch };
}

function add(index: StoredIndex, vectors: readonly Float32Array[], from: number, to: number, dim = DIM) {
  const scratch = new Float64Array(dim);
  for (let row = from; row < to; row++) {
    const code = encodeRow(unitRow(vectors[row]!, dim, scratch, new Float32Array(dim)), dim, new Uint8Array(CODE_HEADER + dim));
    index.addCode(3 * row + 1, code);
  }
}

/** Rows `from..to-1` handed to the finer code in sequence order, as the service reads them (`step` at a time). */
function refine(index: StoredIndex, vectors: readonly Float32Array[], from: number, to: number, step = 500) {
  for (let at = from; at < to; at += step) {
    const rows = vectors.slice(at, Math.min(to, at + step)).map((vector, i) => ({ seq: 3 * (at + i) + 1, vector }));
    if (!index.refine(rows)) return false;
  }
  return true;
}

async function expectFullScanAnswers(copy: Awaited<ReturnType<typeof copyOf>>, queries: readonly Float32Array[], ks: number[]) {
  for (const q of queries) {
    for (const k of ks) {
      const pruned = await copy.index.search(q, k, copy.fetch);
      expect(pruned).toEqual(await copy.index.search(q, k, copy.fetch, { exhaustive: true }));
    }
  }
}

describe('the finer code of a clustered copy', () => {
  it('reads back a fraction of the candidates, with the full scan’s answers, wholly or partly coded', async () => {
    const vectors = mixture(6000, 40, 11);
    const queries = [...mixture(16, 40, 12), vectors[17]!, Float32Array.from(vectors[40]!, (x) => -x), ...gaussians(2, 13)];
    const plain = await copyOf(vectors);
    const coded = await copyOf(vectors);
    expect(coded.index.refine([{ seq: 1, vector: vectors[0]! }])).toBe(false); // no clusters yet
    expect(plain.index.prepare().state).toBe('built');
    expect(coded.index.prepare().state).toBe('built');

    // half the rows coded (a read under way), then all of them
    expect(refine(coded.index, vectors, 0, 3000)).toBe(true);
    expect(coded.index.pruning.refined).toBe(3000);
    await expectFullScanAnswers(coded, queries, [1, 10, 50, 400]);
    expect(refine(coded.index, vectors, 3000, 6000)).toBe(true);
    expect(coded.index.pruning.refined).toBe(6000);
    await expectFullScanAnswers(coded, queries, [1, 10, 50, 400]);

    const fetched = async (copy: typeof plain) => {
      const before = copy.index.stats.fetched;
      for (const q of queries.slice(0, 16)) await copy.index.search(q, 10, copy.fetch);
      return (copy.index.stats.fetched - before) / 16;
    };
    const [without, within] = [await fetched(plain), await fetched(coded)];
    expect(within).toBeLessThan(without / 2);
    expect(within).toBeLessThanOrEqual(16);
  });

  it('keeps sequence order among equal scores, and is exact in 3 dimensions', async () => {
    const vectors = mixture(3000, 30, 21);
    const twin = vectors[5]!;
    for (const row of [2999, 1200, 7, 640]) vectors[row] = Float32Array.from(twin);
    const copy = await copyOf(vectors);
    expect(copy.index.prepare().state).toBe('built');
    refine(copy.index, vectors, 0, 3000);
    const hits = await copy.index.search(twin, 5, copy.fetch);
    expect(hits.map((h) => h.item)).toEqual(['id5', 'id7', 'id640', 'id1200', 'id2999']);
    await expectFullScanAnswers(copy, [twin, ...mixture(6, 30, 22)], [1, 5, 10]);

    const small = gaussians(4000, 61, 3);
    const three = await copyOf(small, 3);
    expect(three.index.prepare().state).toBe('built');
    refine(three.index, small, 0, 4000);
    await expectFullScanAnswers(three, gaussians(60, 62, 3), [1, 7, 60, 500, 2000]);
  });

  it('leaves the rows appended since uncoded, and drops the code when a rebuild moves the rows', async () => {
    const vectors = mixture(4000, 20, 31);
    const copy = await copyOf(vectors.slice(0, 3000));
    expect(copy.index.prepare()).toMatchObject({ state: 'built', rows: 3000 });
    add(copy.index, vectors, 3000, 3500); // the tail: scanned by every search, no code
    refine(copy.index, vectors, 0, 3500);
    expect(copy.index.pruning.refined).toBe(3000);
    const fetch = async (seqs: number[]) => seqs.map((seq) => ({ seq, vector: vectors[(seq - 1) / 3]!, item: `id${(seq - 1) / 3}` }));
    const grown = { index: copy.index, fetch };
    await expectFullScanAnswers(grown, [...mixture(6, 20, 32), vectors[3100]!, vectors[3499]!], [1, 10, 50]);
    add(copy.index, vectors, 3500, 4000);
    expect(copy.index.prepare()).toMatchObject({ state: 'built', rows: 4000, refined: 0 });
    await expectFullScanAnswers(grown, [...mixture(6, 20, 33), vectors[3999]!], [1, 10]);
    refine(copy.index, vectors, 0, 4000);
    expect(copy.index.pruning.refined).toBe(4000);
    await expectFullScanAnswers(grown, [...mixture(6, 20, 33), vectors[3999]!], [1, 10]);
  });
});
