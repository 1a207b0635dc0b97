import { describe, expect, it } from 'vitest';
import { CODE_HEADER, createStoredIndex, encodeRow, unitRow, type StoredIndex } from '../../src/retrieval/vector-index/index.ts';
import { gaussians, mulberry32 } from '../support/random-vectors.ts';

// A copy's clusters built on a worker thread (prepareInBackground, as the service builds them): searches made while
// the thread works scan every row and give the full scan's answer; once the clusters are swapped in the answers are
// the same, now pruned; rows appended during the build are found; a copy released during the build drops it.

const DIM = 768;

/** `n` rows around `centres` random unit centres, noise of length about 0.5 (as retrieval-pruning-index.test.ts). */
function mixture(n: number, centres: number, seed: number): Float32Array[] {
  const next = mulberry32(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  const units = gaussians(centres, 1000 + centres).map((c) => {
    const length = Math.hypot(...c);
    return c.map((x) => x / length);
  });
  const noise = 0.5 / Math.sqrt(DIM);
  return Array.from({ length: n }, () => Float32Array.from(units[Math.floor(next() * centres)]!, (x) => x + noise * gauss()));
}

/** Rows from..to-1 of `vectors` appended as codes, row r with sequence number 3·r + 1. */
function add(index: StoredIndex, vectors: readonly Float32Array[], from: number, to: number) {
  const scratch = new Float64Array(DIM);
  for (let row = from; row < to; row++) {
    index.addCode(
      3 * row + 1,
      encodeRow(unitRow(vectors[row]!, DIM, scratch, new Float32Array(DIM)), DIM, new Uint8Array(CODE_HEADER + DIM)),
    );
  }
}

async function copyOf(vectors: readonly Float32Array[], rows: number) {
  const index = await createStoredIndex(DIM, { pruneFrom: 1000 });
  add(index, vectors, 0, rows);
  const fetch = async (seqs: number[]) => seqs.map((seq) => ({ seq, vector: vectors[(seq - 1) / 3]!, item: `id${(seq - 1) / 3}` }));
  return { index, fetch };
}

describe('the pruning index built in the background', () => {
  it('answers as the full scan while the thread builds, then is built and answers the same, pruned', async () => {
    const vectors = mixture(6000, 40, 71);
    const copy = await copyOf(vectors, 6000);
    const queries = [...mixture(10, 40, 72), vectors[123]!, ...gaussians(2, 73)];
    const full = [];
    for (const q of queries) full.push(await copy.index.search(q, 10, copy.fetch, { exhaustive: true }));

    const building = copy.index.prepareInBackground();
    expect(copy.index.pruning).toMatchObject({ state: 'building', rows: 6000, leaves: 0 });
    const before = copy.index.stats;
    for (const [i, q] of queries.entries()) expect(await copy.index.search(q, 10, copy.fetch)).toEqual(full[i]);
    expect(copy.index.pruning.state).toBe('building'); // the searches above did not wait for the build
    expect(copy.index.stats.fullScans - before.fullScans).toBe(queries.length);

    const built = await building;
    expect(built).toMatchObject({ state: 'built', rows: 6000 });
    expect(built.leaves).toBeGreaterThan(30);
    expect(built.heldMs).toBeLessThan(built.buildMs);
    expect(copy.index.pruning).toEqual(built);
    const after = copy.index.stats;
    for (const [i, q] of queries.entries()) expect(await copy.index.search(q, 10, copy.fetch)).toEqual(full[i]);
    expect(copy.index.stats.fullScans).toBe(after.fullScans);
    const pruned = copy.index.stats;
    for (const q of mixture(20, 40, 74)) await copy.index.search(q, 10, copy.fetch);
    expect((copy.index.stats.scanned - pruned.scanned) / 20).toBeLessThan(0.2 * 6000);
    for (const q of queries)
      for (const k of [1, 50])
        expect(await copy.index.search(q, k, copy.fetch)).toEqual(await copy.index.search(q, k, copy.fetch, { exhaustive: true }));
  });

  it('finds rows appended during the build, then as the new clusters’ tail', async () => {
    const vectors = mixture(4000, 20, 81);
    const copy = await copyOf(vectors, 3000);
    const building = copy.index.prepareInBackground();
    add(copy.index, vectors, 3000, 3600);
    expect((await copy.index.search(vectors[3599]!, 1, copy.fetch))[0]?.item).toBe('id3599');
    expect(await building).toMatchObject({ state: 'built', rows: 3000 });
    add(copy.index, vectors, 3600, 3700);
    expect(copy.index.size).toBe(3700);
    for (const row of [3000, 3599, 3650, 17]) expect((await copy.index.search(vectors[row]!, 1, copy.fetch))[0]?.item).toBe(`id${row}`);
    for (const q of [...mixture(6, 20, 82), vectors[3300]!]) {
      expect(await copy.index.search(q, 10, copy.fetch)).toEqual(await copy.index.search(q, 10, copy.fetch, { exhaustive: true }));
    }
    // a quarter more than the clusters hold: the next build takes every row
    add(copy.index, vectors, 3700, 4000);
    expect(await copy.index.prepareInBackground()).toMatchObject({ state: 'built', rows: 4000 });
  });

  it('keeps a search right when the clusters are swapped in while it reads rows back', async () => {
    const vectors = mixture(3000, 20, 91);
    const copy = await copyOf(vectors, 3000);
    const q = mixture(1, 20, 92)[0]!;
    const want = await copy.index.search(q, 300, copy.fetch, { exhaustive: true });
    const building = copy.index.prepareInBackground();
    let reads = 0;
    // the first read back waits for the swap: the rows this search found have moved when the next batch is read
    const got = await copy.index.search(q, 300, async (seqs) => {
      if (reads++ === 0) await building;
      return copy.fetch(seqs);
    });
    expect(reads).toBeGreaterThan(1);
    expect(copy.index.pruning.state).toBe('built');
    expect(got).toEqual(want);
  });

  it('drops the build of a copy released meanwhile, and builds nothing on random rows', async () => {
    const vectors = mixture(3000, 20, 101);
    const copy = await copyOf(vectors, 3000);
    const building = copy.index.prepareInBackground();
    copy.index.release();
    expect((await building).state).toBe('none');
    expect(copy.index.pruning.state).toBe('none');
    expect(await copy.index.search(vectors[5]!, 10, copy.fetch)).toEqual(
      await copy.index.search(vectors[5]!, 10, copy.fetch, { exhaustive: true }),
    );
    expect((await copy.index.prepareInBackground()).state).toBe('none'); // released: no later build either

    const random = gaussians(2000, 102);
    const plain = await createStoredIndex(DIM, { pruneFrom: 1000 });
    add(plain, random, 0, 2000);
    expect(await plain.prepareInBackground()).toMatchObject({ state: 'useless', leaves: 0, rows: 2000 });
  });
});
