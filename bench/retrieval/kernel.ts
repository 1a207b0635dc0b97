// Micro-benchmark of the in-memory vector index (src/retrieval/vector-index) against a plain JS float scan, on
// random unit vectors of 768 dimensions: search p50/p99, rows scored exactly per search, and whether both return
// the same ids in the same order (they must). Also the one-time kernel compile, index creation and bytes per row.
// Run: npx tsx bench/retrieval/kernel.ts [--sizes 10000,100000] [--queries 200] [--k 10]
import { loadavg } from 'node:os';
import { createVectorIndex } from '../../src/retrieval/vector-index/index.ts';
import { kernelCompileMs } from '../../src/retrieval/vector-index/kernel.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const SIZES = arg('sizes', '10000,100000').split(',').map(Number);
const QUERIES = Number(arg('queries', '200'));
const K = Number(arg('k', '10'));
const DIM = 768;
const WARMUP = 20;

function gaussianUnits(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const uniform = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s + 0.5) / 2 ** 32;
  };
  const out = new Float32Array(n * DIM);
  for (let r = 0; r < n; r++) {
    let sum = 0;
    for (let i = 0; i < DIM; i++) {
      const x = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
      out[r * DIM + i] = x;
      sum += x * x;
    }
    const length = Math.sqrt(sum);
    for (let i = 0; i < DIM; i++) out[r * DIM + i] = out[r * DIM + i]! / length;
  }
  return out;
}

/** Each row as v/‖v‖ rounded to float32: what the index stores, so both sides score the very same numbers. */
function unitRows(matrix: Float32Array, rows: number): Float32Array {
  const out = new Float32Array(rows * DIM);
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let i = 0; i < DIM; i++) sum += matrix[r * DIM + i]! ** 2;
    const length = Math.sqrt(sum);
    for (let i = 0; i < DIM; i++) out[r * DIM + i] = matrix[r * DIM + i]! / length;
  }
  return out;
}

/** In-order float64 sum of row (float32) times query (float64): the index's definition of the score. */
function inOrder(matrix: Float32Array, base: number, query: Float64Array): number {
  let score = 0;
  for (let i = 0; i < DIM; i++) score += matrix[base + i]! * query[i]!;
  return score;
}

/** Four partial sums: the quicker plain loop (other rounding, so equal ids are likely, not guaranteed). */
function fourSums(matrix: Float32Array, base: number, query: Float64Array): number {
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  for (let i = 0; i < DIM; i += 4) {
    a += matrix[base + i]! * query[i]!;
    b += matrix[base + i + 1]! * query[i + 1]!;
    c += matrix[base + i + 2]! * query[i + 2]!;
    d += matrix[base + i + 3]! * query[i + 3]!;
  }
  return a + b + (c + d);
}

/** The baseline: score every row, keep the best k (equal scores in row order). */
function floatScan(matrix: Float32Array, rows: number, query: Float64Array, k: number, scoreRow: typeof inOrder): number[] {
  const best: { row: number; score: number }[] = [];
  for (let r = 0; r < rows; r++) {
    const score = scoreRow(matrix, r * DIM, query);
    if (best.length < k || score > best[best.length - 1]!.score) {
      let at = best.length;
      while (at > 0 && best[at - 1]!.score < score) at--; // equal scores keep row order
      best.splice(at, 0, { row: r, score });
      if (best.length > k) best.pop();
    }
  }
  return best.map((b) => b.row);
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => x.toFixed(3).padStart(8);

async function main() {
  let t = performance.now();
  await createVectorIndex(DIM);
  const firstCreate = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < 100; i++) await createVectorIndex(DIM);
  const create = (performance.now() - t) / 100;
  console.log(
    `kernel: assembled and compiled once in ${kernelCompileMs()!.toFixed(0)} ms (first index ${firstCreate.toFixed(0)} ms); each further index ${(create * 1000).toFixed(0)} µs`,
  );

  const lines: string[] = [];
  for (const n of SIZES) {
    const matrix = gaussianUnits(n, n);
    const queryData = gaussianUnits(QUERIES + WARMUP, 7 + n);
    const index = await createVectorIndex(DIM);
    const ids = Array.from({ length: n }, (_, r) => String(r));
    const vectors = Array.from({ length: n }, (_, r) => matrix.subarray(r * DIM, (r + 1) * DIM));
    t = performance.now();
    index.add(ids, vectors);
    const addMs = performance.now() - t;

    const units = unitRows(matrix, n);
    const fast: number[] = [];
    const plain: number[] = [];
    const quick: number[] = [];
    let identical = 0;
    let quickIdentical = 0;
    const before = index.stats;
    for (let q = 0; q < QUERIES + WARMUP; q++) {
      const query = queryData.subarray(q * DIM, (q + 1) * DIM);
      t = performance.now();
      const hits = index.search(query, K);
      const tFast = performance.now() - t;
      const length = Math.sqrt(query.reduce((sum, x) => sum + x * x, 0));
      const unit = Float64Array.from(query, (x) => x / length);
      t = performance.now();
      const want = floatScan(units, n, unit, K, inOrder);
      const tPlain = performance.now() - t;
      t = performance.now();
      const quicker = floatScan(units, n, unit, K, fourSums);
      const tQuick = performance.now() - t;
      if (q < WARMUP) continue;
      fast.push(tFast);
      plain.push(tPlain);
      quick.push(tQuick);
      if (hits.map((h) => h.id).join() === want.join()) identical++;
      if (quicker.join() === want.join()) quickIdentical++;
    }
    const reranked = (index.stats.reranked - before.reranked) / (index.stats.searches - before.searches);
    lines.push(
      `${String(n).padStart(7)} | int8 SIMD + exact re-rank | ${ms(percentile(fast, 50))} | ${ms(percentile(fast, 99))} | ${reranked.toFixed(1).padStart(9)} | ${`${identical}/${QUERIES}`.padEnd(8)} | ${(index.bytes / n).toFixed(0)} B/row, add ${(addMs / 1000).toFixed(1)} s`,
      `${String(n).padStart(7)} | plain JS scan, in order   | ${ms(percentile(plain, 50))} | ${ms(percentile(plain, 99))} | ${String(n).padStart(9)} | (ref)    | ${DIM * 4} B/row`,
      `${String(n).padStart(7)} | plain JS scan, 4 sums     | ${ms(percentile(quick, 50))} | ${ms(percentile(quick, 99))} | ${String(n).padStart(9)} | ${`${quickIdentical}/${QUERIES}`.padEnd(8)} | ${DIM * 4} B/row`,
    );
  }
  console.log(
    `\nsearch, top ${K}, ${QUERIES} random unit queries per size, ${DIM} dimensions (ms); load average ${loadavg()[0]!.toFixed(1)} on 2 cores`,
  );
  console.log(`   rows | method                    |      p50 |      p99 | re-ranked | same ids | memory`);
  console.log(lines.join('\n'));
}

await main();
