// The int8 pass alone (the row store's candidates: dot products and the choice of candidates, no re-rank), on one
// thread and split across --threads (0: one per core), on random row codes of 768 dimensions; each query is timed
// both ways in turn, so a busy machine slows both alike. The pass reads every row, so its values do not matter:
// 4096 distinct codes are repeated, which makes a million rows quick to build.
// Run: npx tsx bench/retrieval/pass.ts [--sizes 50000,100000,1000000] [--queries 60] [--threads 0]
import { loadavg } from 'node:os';
import { kernelModule } from '../../src/retrieval/vector-index/kernel.ts';
import { configureVectorThreads, vectorThreadSettings } from '../../src/retrieval/vector-index/parallel.ts';
import { CODE_HEADER, encodeRow, quantise } from '../../src/retrieval/vector-index/quantise.ts';
import { createRowStore } from '../../src/retrieval/vector-index/rows.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const SIZES = arg('sizes', '50000,100000,1000000').split(',').map(Number);
const QUERIES = Number(arg('queries', '60'));
const DIM = 768;
const K = 10;

let seed = 1;
const uniform = () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 2 ** 32 - 0.5;
};
const unitVector = () => {
  const v = Float64Array.from({ length: DIM }, uniform);
  const length = Math.hypot(...v);
  return v.map((x) => x / length);
};
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

configureVectorThreads({ threads: Number(arg('threads', '0')) });
const module = await kernelModule();
const codes = Array.from({ length: 4096 }, () => encodeRow(Float32Array.from(unitVector()), DIM, new Uint8Array(CODE_HEADER + DIM)));
console.log(
  `int8 pass, top ${K}, ${QUERIES} queries, ${DIM} dimensions: one thread / split on ${vectorThreadSettings().threads} (ms, p50)`,
);
for (const n of SIZES) {
  const rows = createRowStore(module, DIM);
  rows.reserve(n);
  for (let r = 0; r < n; r++) rows.writeCode(r, codes[(r * 2654435761) % 4096]!);
  const ints = new Int16Array(DIM);
  const q = quantise(unitVector(), DIM, rows.queryLevels, ints);
  const bounds = { scale: q.scale, residual: q.residual, length: 1 };
  configureVectorThreads({ minRows: 0 });
  rows.candidates(ints, n, K, bounds); // starts the workers
  await new Promise((resolve) => setTimeout(resolve, 500));
  const one: number[] = [];
  const split: number[] = [];
  let splitCount = 0;
  for (let i = 0; i < QUERIES; i++) {
    configureVectorThreads({ minRows: Number.MAX_SAFE_INTEGER });
    let t = performance.now();
    rows.candidates(ints, n, K, bounds);
    one.push(performance.now() - t);
    configureVectorThreads({ minRows: 0 });
    t = performance.now();
    if (rows.candidates(ints, n, K, bounds).threads > 1) splitCount++;
    split.push(performance.now() - t);
  }
  console.log(
    `${String(n).padStart(8)} rows: ${p50(one).toFixed(2)} / ${p50(split).toFixed(2)} ms (${splitCount}/${QUERIES} split); load average ${loadavg()[0]!.toFixed(1)}; ${(rows.bytes / n).toFixed(0)} B/row`,
  );
}
