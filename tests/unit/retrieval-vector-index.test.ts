import { describe, expect, it } from 'vitest';
import { createVectorIndex } from '../../src/retrieval/vector-index/index.ts';

// The in-memory index must return exactly what a full float scan returns: same ids, same order.
function prng(seed: number) {
  return () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32 - 0.5;
  };
}

const norm = (v: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  return Math.sqrt(s);
};
const toUnitF32 = (v: ArrayLike<number>) => {
  const n = norm(v);
  return Float32Array.from(v, (x) => (n > 0 ? x / n : 0));
};

function bruteForce(units: Float32Array[], query: ArrayLike<number>, k: number) {
  const qn = norm(query);
  const unitQ = Array.from(query, (x) => (qn > 0 ? x / qn : 0));
  return units
    .map((f, r) => {
      let s = 0;
      for (let i = 0; i < f.length; i++) s += f[i]! * unitQ[i]!;
      return { r, s };
    })
    .sort((a, b) => b.s - a.s || a.r - b.r)
    .slice(0, k);
}

async function expectExact(vectors: Float32Array[], queries: Float32Array[], ks: number[]) {
  const index = await createVectorIndex(vectors[0]?.length ?? 768);
  index.add(vectors.map((_, i) => `id${i}`), vectors);
  const units = vectors.map(toUnitF32);
  for (const q of queries) {
    const ranked = bruteForce(units, q, Math.max(...ks));
    for (const k of ks) {
      const got = index.search(q, k);
      const want = ranked.slice(0, k);
      expect(got.map((h) => h.id)).toEqual(want.map((w) => `id${w.r}`));
      got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.s, 6));
    }
  }
}

describe('vector index', () => {
  const dim = 768;
  const random = (n: number, seed: number) => {
    const r = prng(seed);
    return Array.from({ length: n }, () => Float32Array.from({ length: dim }, r));
  };

  it.each([1, 4, 1000, 20_000])('matches an exact scan on %i random vectors', async (n) => {
    await expectExact(random(n, n), random(8, 7 + n), [1, 5, 10, 50]);
  });

  it('is exact on near-duplicates, ties, spiky and tiny vectors', async () => {
    const r = prng(99);
    const base = Float32Array.from({ length: dim }, r);
    const vectors: Float32Array[] = [];
    for (let i = 0; i < 300; i++) vectors.push(Float32Array.from(base, (x) => x + r() * 1e-4)); // near-duplicates
    for (let i = 0; i < 50; i++) vectors.push(Float32Array.from(base)); // exact ties
    for (let i = 0; i < 50; i++) {
      const spike = new Float32Array(dim).fill(1e-3);
      spike[i] = 100;
      vectors.push(spike);
    }
    for (let i = 0; i < 20; i++) vectors.push(Float32Array.from({ length: dim }, () => r() * 1e-30));
    vectors.push(new Float32Array(dim));
    await expectExact(vectors, [base, vectors[310]!, vectors[360]!, Float32Array.from({ length: dim }, r)], [1, 10, 50]);
  });

  it('gives the same answers whether vectors arrive in one batch or several', async () => {
    const vectors = random(500, 3);
    const one = await createVectorIndex(dim);
    one.add(vectors.map((_, i) => `id${i}`), vectors);
    const many = await createVectorIndex(dim);
    for (let i = 0; i < 500; i += 37) many.add(vectors.slice(i, i + 37).map((_, j) => `id${i + j}`), vectors.slice(i, i + 37));
    const q = random(1, 11)[0]!;
    expect(many.search(q, 20)).toEqual(one.search(q, 20));
    expect(many.size).toBe(500);
  });

  it('returns nothing from an empty index, and checks its inputs', async () => {
    const index = await createVectorIndex(4);
    expect(index.search([1, 0, 0, 0], 5)).toEqual([]);
    expect(() => index.add(['a'], [[1, 2, 3]])).toThrow(/dimension 4/);
    expect(() => index.search([1, 2], 1)).toThrow(/dimension 4/);
    expect(() => index.search([1, 0, 0, 0], 0)).toThrow(/k must be/);
    index.add(['a', 'b'], [[1, 0, 0, 0], [0, 1, 0, 0]]);
    expect(index.search([1, 0.1, 0, 0], 5).map((h) => h.id)).toEqual(['a', 'b']);
    index.clear();
    expect(index.size).toBe(0);
    expect(index.search([1, 0, 0, 0], 5)).toEqual([]);
  });
});
