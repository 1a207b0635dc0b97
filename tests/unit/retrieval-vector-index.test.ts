import { describe, expect, it } from 'vitest';
import { createVectorIndex, type Hit } from '../../src/retrieval/vector-index/index.ts';
import { instantiateKernel, kernelModule } from '../../src/retrieval/vector-index/kernel.ts';
import { quantise, ROW_LEVELS, roundUp32 } from '../../src/retrieval/vector-index/quantise.ts';
import { candidates, candidatesOf, rowsBelow } from '../../src/retrieval/vector-index/rank.ts';
import { queryLevelsFor } from '../../src/retrieval/vector-index/rows.ts';
import { mulberry32 } from '../support/random-vectors.ts';

// The index must answer exactly what a full scan answers: the same ids in the same order. The scan here is the
// plain definition: rows v/‖v‖ rounded to float32, the query q/‖q‖ in float64, score = Σ row[i]·query[i] in
// float64, best first, equal scores in insertion order.

type Vec = Float32Array | number[];
const DIM = 768;
const KS = [1, 5, 10, 50];

/** Normally distributed components, scaled to length 1 (the index scales them again, as it must). */
function randomUnits(n: number, seed: number, dim = DIM): Float32Array[] {
  const next = mulberry32(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  return Array.from({ length: n }, () => {
    const v = Array.from({ length: dim }, gauss);
    const length = Math.hypot(...v);
    return Float32Array.from(v, (x) => x / length);
  });
}

const lengthOf = (v: ArrayLike<number>) => {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  return Math.sqrt(sum);
};

/** The full scan over `vectors`: scan(query, k) gives the best k rows and their scores. */
function exactScan(vectors: readonly Vec[]) {
  const unitOf = (v: Vec) => {
    const l = lengthOf(v);
    return Float32Array.from(v, (x) => (l > 0 ? x / l : 0));
  };
  const rows = vectors.map(unitOf);
  return (query: Vec, k: number) => {
    const ql = lengthOf(query);
    const q = Float64Array.from(query, (x) => (ql > 0 ? x / ql : 0));
    const scored = rows.map((unit, row) => {
      let score = 0;
      for (let i = 0; i < unit.length; i++) score += unit[i]! * q[i]!;
      return { row, score };
    });
    return scored.sort((a, b) => b.score - a.score || a.row - b.row).slice(0, k);
  };
}

/** Cosine similarity in float64 without any float32 rounding: the scores must agree with it to 1e-6. */
function cosine(a: Vec, b: Vec) {
  const la = lengthOf(a);
  const lb = lengthOf(b);
  if (la === 0 || lb === 0) return 0;
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i]! / la) * (b[i]! / lb);
  return dot;
}

async function indexOf(vectors: readonly Vec[], dim = DIM) {
  const index = await createVectorIndex(dim);
  index.add(
    vectors.map((_, row) => `id${row}`),
    vectors,
  );
  return index;
}

function expectSameAsScan(got: Hit[], want: { row: number; score: number }[], vectors: readonly Vec[], query: Vec) {
  expect(got.map((h) => h.id)).toEqual(want.map((w) => `id${w.row}`));
  got.forEach((hit, i) => {
    expect(Math.abs(hit.score - want[i]!.score)).toBeLessThanOrEqual(1e-6);
    expect(Math.abs(hit.score - cosine(vectors[want[i]!.row]!, query))).toBeLessThanOrEqual(1e-6);
  });
}

async function expectExactForAll(vectors: readonly Vec[], queries: readonly Vec[], dim = DIM) {
  const index = await indexOf(vectors, dim);
  const scan = exactScan(vectors);
  for (const query of queries) {
    const ranked = scan(query, Math.max(...KS));
    for (const k of KS) expectSameAsScan(index.search(query, k), ranked.slice(0, k), vectors, query);
  }
  return index;
}

/** Queries of every kind: random directions, stored rows, near neighbours of stored rows, their opposites. */
function queriesFor(vectors: readonly Vec[], count: number, seed: number, dim = DIM): Vec[] {
  const next = mulberry32(seed);
  const random = randomUnits(count, seed + 1, dim);
  return random.map((q, i) => {
    const row = vectors[Math.floor(next() * vectors.length)];
    if (!row || i % 4 === 0) return q;
    if (i % 4 === 1) return Float32Array.from(row);
    if (i % 4 === 2) return Float32Array.from(row, (x, j) => x + 0.02 * q[j]!);
    return Float32Array.from(row, (x) => -x);
  });
}

describe('vector index: exact top k on random unit vectors (768 dimensions)', () => {
  it.each([0, 1, 4, 9, 49, 1000, 1003])('matches a full scan with %i rows', async (n) => {
    const vectors = randomUnits(n, 100 + n);
    await expectExactForAll(vectors, queriesFor(vectors, 40, 7 + n));
  });

  it('matches a full scan with 20 000 rows, and scores only a small share of them exactly', async () => {
    const vectors = randomUnits(20_000, 20_000);
    const index = await expectExactForAll(vectors, queriesFor(vectors, 16, 5));
    const { searches, reranked } = index.stats;
    expect(searches).toBe(16 * KS.length);
    expect(reranked / searches).toBeLessThan(0.01 * 20_000); // the int8 bound discards over 99% of the rows
    // 16 queries at 4 depths checked against full scans of 20 000 rows: seconds alone, past 30 s beside two other files
  }, 120_000);

  it.each([1, 3, 17, 100])('matches a full scan in %i dimensions (padding and groups of four)', async (dim) => {
    const vectors = randomUnits(203, dim, dim);
    await expectExactForAll(vectors, queriesFor(vectors, 20, dim + 1, dim), dim);
  });
});

describe('vector index: adversarial data', () => {
  const base = randomUnits(1, 99)[0]!;

  it('is exact on near-duplicates at every scale of difference', async () => {
    const next = mulberry32(1);
    const vectors: Vec[] = [];
    for (const eps of [1e-2, 1e-4, 1e-6, 1e-7, 1e-8]) {
      for (let i = 0; i < 60; i++) vectors.push(Float32Array.from(base, (x) => x + eps * (next() - 0.5)));
    }
    vectors.push(...randomUnits(200, 5));
    await expectExactForAll(vectors, [base, vectors[7]!, vectors[250]!, ...queriesFor(vectors, 12, 3)]);
  });

  it('keeps insertion order among equal scores, for identical and for different vectors', async () => {
    const identical = Array.from({ length: 60 }, () => Float32Array.from(base));
    // different vectors of equal length (small integers, the tail rotated): the same score against the first axis
    const tail = Array.from({ length: DIM - 1 }, (_, j) => ((j * 7) % 5) - 2);
    const permuted = Array.from({ length: 80 }, (_, i) => [3, ...tail.slice(i), ...tail.slice(0, i)]);
    const vectors: Vec[] = [...randomUnits(30, 8), ...identical, ...permuted, ...identical];
    const axis = Array.from({ length: DIM }, (_, j) => (j === 0 ? 1 : 0));
    const index = await expectExactForAll(vectors, [base, axis, Float32Array.from(base, (x) => -x)]);
    expect(index.search(base, 50).map((h) => h.id)).toEqual(Array.from({ length: 50 }, (_, i) => `id${30 + i}`));
  });

  /**
   * Two rows, A and B = A with every component but the first negated (the first, 127, fixes the int8 step), whose
   * rounding error points along the query (term 'row'), or rows on the int8 grid against a query whose own rounding
   * error points along them (term 'query'). Either way the integer approximation is off by 99.9% of that term of
   * the bound and ranks B first, while the exact scores rank A first: a bound 2% too small would return B.
   */
  function mirroredPair(term: 'row' | 'query', seed: number, levels = queryLevelsFor(DIM)) {
    const random = mulberry32(seed);
    const along = Array.from({ length: DIM }, (_, i) => (i === 0 ? 0 : random() < 0.5 ? -1 : 1));
    // `levels` is the query's integer range, so the query's step is exactly 1
    const range = term === 'row' ? 126 : Math.min(1000, levels - 1);
    const ints = along.map((t) => (t === 0 ? 0 : Math.floor(random() * (2 * range + 1)) - range));
    // integer part of the approximate score A·q: −98.5% of the rounding error's share, so that B = −A scores higher
    const target = -Math.round(0.985 * 0.49 * (DIM - 1));
    let sum = ints.reduce((n, x, i) => n + x * along[i]!, 0);
    for (let i = 1; sum !== target; i++) {
      const step = Math.max(-range - ints[i]!, Math.min(range - ints[i]!, (target - sum) * along[i]!));
      ints[i] = ints[i]! + step;
      sum += step * along[i]!;
    }
    const a = term === 'row' ? ints.map((x, i) => (i === 0 ? 127 : x + 0.49 * along[i]!)) : along.map((t, i) => (i === 0 ? 127 : 127 * t));
    const query = term === 'row' ? along : ints.map((x, i) => (i === 0 ? levels : x + 0.49 * along[i]!));
    return { rows: [a, a.map((x, i) => (i === 0 ? x : -x))], query };
  }

  // 63 steps: the coarse query of the relaxed-SIMD pass (rows.ts), whose bound must be as tight as the fine one's
  it.each([
    ['row', queryLevelsFor(DIM)],
    ['query', queryLevelsFor(DIM)],
    ['query', 63],
  ] as const)(
    'is exact when the %s rounding points along the other vector (the bound is tight; query in %i steps)',
    async (term, levels) => {
      for (let seed = 1; seed <= 8; seed++) {
        const { rows, query } = mirroredPair(term, seed, levels);
        // the construction does what it says: the integers favour B, the exact scores A
        const approx = rows.map((row) => {
          const [ri, qi] = [new Int8Array(DIM), new Int16Array(DIM)];
          const [r, q] = [quantise(row, DIM, 127, ri), quantise(query, DIM, levels, qi)];
          return ri.reduce((n, x, i) => n + x * qi[i]!, 0) * r.scale * q.scale;
        });
        expect(approx[1]).toBeGreaterThan(approx[0]!);
        // and rows far from the query, so that the relaxed pass's coarse bound alone narrows the rows to A and B
        const far = Array.from({ length: 30 }, (_, i) => query.map((x, j) => -x + ((i + j) % 3)));
        const stored = [...rows, ...far];
        const index = await indexOf(stored);
        expect(index.search(query, 1).map((h) => h.id)).toEqual(['id0']);
        expectSameAsScan(index.search(query, 2), exactScan(stored)(query, 2), stored, query);
      }
    },
  );

  it('is exact with one large component, and with tiny and zero vectors', async () => {
    const next = mulberry32(2);
    const spikes = Array.from({ length: 80 }, (_, i) => {
      const v = Float32Array.from({ length: DIM }, () => 1e-3 * (next() - 0.5));
      v[i % 7] = 100 * (i % 2 ? 1 : -1);
      return v;
    });
    const tiny = Array.from({ length: 30 }, () => Float32Array.from({ length: DIM }, () => 1e-30 * (next() - 0.5)));
    const huge = Array.from({ length: 10 }, () => Float32Array.from({ length: DIM }, () => 1e30 * (next() - 0.5)));
    const zero = [new Float32Array(DIM), new Array<number>(DIM).fill(0)];
    const vectors: Vec[] = [...spikes, ...tiny, ...zero, ...huge, ...randomUnits(100, 6)];
    await expectExactForAll(vectors, [spikes[0]!, spikes[3]!, tiny[0]!, huge[1]!, zero[0]!, ...queriesFor(vectors, 12, 9)]);
  });

  it('scores vectors too small to square in float64 by their direction', async () => {
    const v = randomUnits(1, 12)[0]!;
    const index = await indexOf([Array.from(v, (x) => x * 1e-200), v]);
    const hits = index.search(v, 2);
    expect(hits.map((h) => h.score)).toEqual([expect.closeTo(1, 6), expect.closeTo(1, 6)]);
    expect(
      index.search(
        Array.from(v, (x) => x * 1e200),
        1,
      )[0]!.score,
    ).toBeCloseTo(1, 6);
  });

  it('keeps the error bound it relies on: |x·q − x̂·q̂| ≤ ‖x − x̂‖·‖q‖ + ‖x̂‖·‖q − q̂‖', () => {
    const xs = [...randomUnits(200, 31), ...randomUnits(1, 32).map((v) => v.map((x, i) => (i === 0 ? 50 : x)))];
    const qs = randomUnits(xs.length, 33);
    for (const [n, x] of xs.entries()) {
      const q = qs[n]!;
      const xi = new Int8Array(DIM);
      const qi = new Int16Array(DIM);
      const qx = quantise(x, DIM, 127, xi);
      const qq = quantise(q, DIM, queryLevelsFor(DIM), qi);
      let exact = 0;
      let ints = 0;
      for (let i = 0; i < DIM; i++) {
        exact += x[i]! * q[i]!;
        ints += xi[i]! * qi[i]!;
      }
      const bound = qx.residual * lengthOf(q) + qx.norm * qq.residual;
      expect(Math.abs(exact - ints * qx.scale * qq.scale)).toBeLessThanOrEqual(bound);
      expect(bound).toBeLessThan(0.2 * lengthOf(x)); // and it is tight enough to be useful
    }
  });
});

describe('vector index: batches, inputs and lifecycle', () => {
  it('answers the same after one batch, many batches, or one vector at a time', async () => {
    const vectors = randomUnits(700, 3);
    const one = await indexOf(vectors);
    const batches = await createVectorIndex(DIM);
    for (let i = 0; i < 700; i += 37)
      batches.add(
        vectors.slice(i, i + 37).map((_, j) => `id${i + j}`),
        vectors.slice(i, i + 37),
      );
    const single = await createVectorIndex(DIM);
    vectors.forEach((v, i) => {
      single.add([`id${i}`], [v]);
    });
    for (const q of queriesFor(vectors, 12, 4)) {
      for (const k of KS) {
        const want = one.search(q, k);
        expect(batches.search(q, k)).toEqual(want);
        expect(single.search(q, k)).toEqual(want);
      }
    }
    expect([batches.size, single.size]).toEqual([700, 700]);
  });

  it('checks dimensions, k and values, and a rejected batch leaves the index as it was', async () => {
    const index = await createVectorIndex(4);
    expect(index.search([1, 0, 0, 0], 5)).toEqual([]);
    expect(() => index.search([1, 2], 1)).toThrow(/dimension 2, expected dimension 4/);
    index.add(
      ['a', 'b'],
      [
        [1, 0, 0, 0],
        [0, 1, 0, 0],
      ],
    );
    expect(() =>
      index.add(
        ['c', 'd'],
        [
          [1, 0, 0, 0],
          [1, 2, 3],
        ],
      ),
    ).toThrow(/vector 1 \(id d\) has dimension 3/);
    expect(() => index.add(['c'], [[1, Number.NaN, 0, 0]])).toThrow(/not a finite number/);
    expect(() => index.add(['c', 'd'], [[1, 0, 0, 0]])).toThrow(/2 ids for 1 vectors/);
    expect(() => index.search([1, 0, 0, 0, 0], 1)).toThrow(/dimension 5/);
    expect(() => index.search([Number.POSITIVE_INFINITY, 0, 0, 0], 1)).toThrow(/not a finite number/);
    for (const k of [0, -1, 1.5, Number.NaN]) expect(() => index.search([1, 0, 0, 0], k)).toThrow(/k must be a positive integer/);
    await expect(createVectorIndex(0)).rejects.toThrow(/dimension must be a positive integer/);
    expect(index.size).toBe(2);
    expect(index.search([1, 0.1, 0, 0], 5)).toEqual([
      { id: 'a', score: expect.closeTo(1 / Math.hypot(1, 0.1), 12) },
      { id: 'b', score: expect.closeTo(0.1 / Math.hypot(1, 0.1), 12) },
    ]);
  });

  it('keeps many indexes in one process apart, each with its own memory', async () => {
    const vectors = randomUnits(40, 77);
    const indexes = await Promise.all(Array.from({ length: 200 }, () => createVectorIndex(DIM)));
    indexes.forEach((index, i) => {
      index.add([`only${i}`], [vectors[i % 40]!]);
    });
    indexes[0]!.add(
      vectors.map((_, i) => `more${i}`),
      vectors,
    );
    expect(indexes[7]!.search(vectors[3]!, 5)).toEqual([{ id: 'only7', score: expect.closeTo(cosine(vectors[7]!, vectors[3]!), 6) }]);
    expect(indexes[0]!.search(vectors[3]!, 1).map((h) => h.id)).toEqual(['more3']);
    expect(indexes[0]!.size).toBe(41);
  });

  it('empties on clear and fills again, and reports the bytes it holds', async () => {
    const vectors = randomUnits(300, 21);
    const index = await indexOf(vectors);
    expect(index.bytes).toBeGreaterThanOrEqual(300 * (DIM + 4 * DIM + 12));
    index.clear();
    expect(index.size).toBe(0);
    expect(index.search(vectors[0]!, 3)).toEqual([]);
    expect(index.bytes).toBeLessThan(300 * DIM);
    index.add(
      vectors.slice(0, 50).map((_, i) => `id${i}`),
      vectors.slice(0, 50),
    );
    const first = vectors.slice(0, 50);
    expectSameAsScan(index.search(vectors[60]!, 10), exactScan(first)(vectors[60]!, 10), first, vectors[60]!);
  });
});

describe('vector index: the relaxed-SIMD pass', () => {
  it('is there on Node 22 and later, where the service runs (Node 20 has only the portable kernel)', async () => {
    const major = Number(process.versions.node.split('.')[0]);
    if (major >= 22 && !('bun' in process.versions)) expect((await kernelModule()).relaxed).toBeDefined();
  });

  it('answers exactly what the portable kernel answers, on random, near-duplicate, tied and odd-sized data', async () => {
    const base = randomUnits(1, 42)[0]!;
    const next = mulberry32(4);
    const cases: { vectors: Vec[]; dim: number }[] = [
      { vectors: randomUnits(5_000, 31), dim: DIM },
      {
        vectors: [...Array.from({ length: 300 }, () => Float32Array.from(base, (x) => x + 1e-6 * (next() - 0.5))), ...randomUnits(100, 3)],
        dim: DIM,
      },
      { vectors: [...Array.from({ length: 40 }, () => Float32Array.from(base)), ...randomUnits(50, 9)], dim: DIM },
      ...[1, 3, 17, 100].map((dim) => ({ vectors: randomUnits(203, dim, dim), dim })),
    ];
    for (const { vectors, dim } of cases) {
      const [portable, relaxed] = await Promise.all([createVectorIndex(dim, { relaxed: false }), createVectorIndex(dim)]);
      for (const index of [portable, relaxed])
        index.add(
          vectors.map((_, row) => `id${row}`),
          vectors,
        );
      for (const query of queriesFor(vectors, 12, dim, dim)) {
        for (const k of KS) expect(relaxed.search(query, k)).toEqual(portable.search(query, k));
      }
    }
  });
});

describe('vector index: the selection tests a row on its dot product first', () => {
  /** Rows as a copy holds them (codes, bounds, Σ of each code) and the relaxed pass's dot products with `query`. */
  function relaxedPass(vectors: readonly Vec[], query: Vec) {
    const n = vectors.length;
    const bounds = { scale: new Float32Array(n), residual: new Float32Array(n), norm: new Float32Array(n) };
    const sums = new Int32Array(n);
    const dots = new Int32Array(n);
    const unit = Float64Array.from(query, (x) => x / lengthOf(query));
    const coarse = new Int8Array(DIM);
    const q = quantise(unit, DIM, 63, coarse);
    const code = new Int8Array(DIM);
    vectors.forEach((v, r) => {
      const l = lengthOf(v);
      const row = quantise(
        Float32Array.from(v, (x) => (l > 0 ? x / l : 0)),
        DIM,
        ROW_LEVELS,
        code,
      );
      bounds.scale[r] = row.scale;
      bounds.residual[r] = roundUp32(row.residual);
      bounds.norm[r] = roundUp32(row.norm);
      for (let i = 0; i < DIM; i++) {
        dots[r] = dots[r]! + code[i]! * (64 + coarse[i]!);
        sums[r] = sums[r]! + code[i]!;
      }
    });
    const limits = Float32Array.of(Math.max(...bounds.scale), Math.max(...bounds.residual), Math.max(...bounds.norm));
    return { bounds, sums, dots, limits, query: { ...q, length: lengthOf(unit) } };
  }

  it('lists, four rows a step, each row whose dot product less the shift is above the integer given, as a plain loop does', async () => {
    const kernel = instantiateKernel(await kernelModule());
    const rows = 4096;
    kernel.memory.grow(Math.ceil((12 * rows) / 65536));
    const [outAt, sumsAt, listAt] = [0, 4 * rows, 8 * rows];
    const out = new Int32Array(kernel.memory.buffer, outAt, rows);
    const sums = new Int32Array(kernel.memory.buffer, sumsAt, rows);
    const next = mulberry32(11);
    for (let i = 0; i < rows; i++) {
      sums[i] = Math.round((next() - 0.5) * 4000);
      out[i] = Math.round((next() - 0.5) * 2 ** 20) + 64 * sums[i]!;
    }
    out[7] = 2 ** 31 - 1; // the extremes of an i32, with no sum to take away
    sums[7] = 0;
    out[9] = -(2 ** 31);
    sums[9] = 0;
    for (const count of [0, 1, 3, 4, 5, 1023, 1024, rows]) {
      for (const shift of [0, 64]) {
        for (const under of [-(2 ** 31), -1, 0, 1, 2 ** 18, 2 ** 19 - 7, 2 ** 31 - 1]) {
          const want: number[] = [];
          // whole fours: the rows past `count` in the last one are listed too (the caller passes over them)
          for (let i = 0; i < Math.ceil(count / 4) * 4; i++) if (out[i]! - shift * sums[i]! > under) want.push(i);
          const found = kernel.above(outAt, sumsAt, shift, count, under, listAt);
          expect(Array.from(new Int32Array(kernel.memory.buffer, listAt, found))).toEqual(want);
        }
      }
    }
  });

  it('keeps the same rows, bounds and floor as without the test, block after block, on random and adversarial rows', () => {
    const base = randomUnits(1, 77)[0]!;
    const next = mulberry32(5);
    const spike = (i: number) => Float32Array.from({ length: DIM }, (_, j) => (j === i % DIM ? 1 : 1e-3 * (next() - 0.5)));
    const sets: Vec[][] = [
      randomUnits(3_000, 61),
      // near-duplicates of the query among random rows, rows with one large component (the largest scales), and zero rows
      [
        ...randomUnits(1_500, 62),
        ...Array.from({ length: 200 }, () => Float32Array.from(base, (x) => x + 1e-4 * (next() - 0.5))),
        ...Array.from({ length: 50 }, (_, i) => spike(i)),
        ...Array.from({ length: 20 }, () => new Float32Array(DIM)),
        ...randomUnits(1_500, 63),
      ],
    ];
    let passedOver = 0;
    for (const vectors of sets) {
      for (const query of [base, ...queriesFor(vectors, 6, 8)]) {
        const { bounds, sums, dots, limits, query: q } = relaxedPass(vectors, query);
        for (const k of KS) {
          // blocks of 500 rows, each from the floor the ones before reached (as a split pass's thread does)
          let floor = Number.NEGATIVE_INFINITY;
          const union = { rows: [] as number[], upper: [] as number[], lower: [] as number[] };
          for (let from = 0; from < vectors.length; from += 500) {
            const count = Math.min(500, vectors.length - from);
            const block = dots.subarray(from, from + count);
            const of = { from, sums, shift: 64, floor };
            const plain = candidates(block, bounds, q, count, Math.min(k, count), of);
            const tested = candidates(block, { ...bounds, limits }, q, count, Math.min(k, count), of);
            expect(tested).toEqual(plain);
            union.rows.push(...tested.rows);
            union.upper.push(...tested.upper);
            union.lower.push(...tested.lower);
            const under = rowsBelow(limits, q)(plain.floor);
            for (let i = 0; i < count; i++) if (dots[from + i]! - 64 * sums[from + i]! <= under) passedOver += 1;
            floor = plain.floor;
          }
          // the blocks' rows selected again from the bounds they answered, as from their dot products and bounds
          const again = candidates(
            Int32Array.from(union.rows, (r) => dots[r]!),
            bounds,
            q,
            union.rows.length,
            k,
            { ids: union.rows, sums, shift: 64 },
          );
          expect(candidatesOf(union.rows, union.upper, union.lower, union.rows.length, k)).toEqual({
            rows: again.rows,
            upper: again.upper,
            floor: again.floor,
          });
        }
      }
    }
    // the test does pass over rows: most of them, once a floor is reached
    expect(passedOver).toBeGreaterThan(0);
  });

  it('passes over a row at the last dot product proven below the floor, and keeps the row one above it', () => {
    const query = { scale: 1.0127e-3, residual: 8.24e-3, length: 1 };
    for (const [scale, residual, norm] of [
      [5.25e-4, 4.3e-3, 1.0006],
      [7.9e-3, 1e-6, 1],
      [1e-5, 0.2, 0.9],
    ] as const) {
      const k = 3;
      const n = k + 5;
      const bounds = {
        scale: new Float32Array(n).fill(scale),
        residual: new Float32Array(n).fill(residual),
        norm: new Float32Array(n).fill(norm),
      };
      const limits = Float32Array.of(scale, residual, norm);
      const sums = new Int32Array(n).fill(-1);
      // k rows far above the rest make the floor; then rows about the last dot product below it
      const dots = new Int32Array(n);
      dots.fill(Math.round(1.5 / (scale * query.scale)), 0, k); // a score of about 1.5, far above the error
      const first = candidates(dots.subarray(0, k), bounds, query, k, k, { sums, shift: 64 });
      const under = rowsBelow(limits, query)(first.floor);
      expect(under).toBeGreaterThan(0);
      for (let i = 0; i < 5; i++) dots[k + i] = under - 2 - 64 + i; // d = dots + 64: under - 2 .. under + 2
      const plain = candidates(dots, bounds, query, n, k, { sums, shift: 64 });
      expect(candidates(dots, { ...bounds, limits }, query, n, k, { sums, shift: 64 })).toEqual(plain);
      // the rows one and two above the last proven below it reach the floor, so the test must not pass over them
      expect(plain.rows).toEqual([0, 1, 2, k + 3, k + 4]);
    }
  });
});
