// The split full scan of a copy (src/retrieval/vector-index/split.ts) on its own, without Postgres: a copy of N random
// unit vectors of 768 dimensions (the float rows made again from their sequence number when a search reads them
// back), its full scan on this thread alone and split across the cores, in turns, against the floor of each (a bare
// read of the same rows on the same threads, nothing computed); the answers of both must be identical. Then the copy
// made again and released `--rebuilds` times, the process's resident set after each: flat when released memory is
// given back.
// Run: npx tsx bench/retrieval/split.ts [--rows 1000000] [--queries 30] [--rebuilds 8] [--rebuild-rows 300000]
import { availableParallelism, loadavg } from 'node:os';
import { createStoredIndex, type StoredIndex } from '../../src/retrieval/vector-index/index.ts';
import { CODE_HEADER, encodeRow, unitRow } from '../../src/retrieval/vector-index/quantise.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const ROWS = Number(arg('rows', '1000000'));
const QUERIES = Number(arg('queries', '30'));
const REBUILDS = Number(arg('rebuilds', '8'));
const REBUILD_ROWS = Number(arg('rebuild-rows', '300000'));
const DIM = 768;
const K = 10;

/** Row `seq`'s vector: components uniform in [-0.5, 0.5] from a generator seeded by the sequence number. */
function vectorOf(seq: number, out = new Float32Array(DIM)): Float32Array {
  let s = (seq * 2654435761 + 12345) >>> 0;
  for (let i = 0; i < DIM; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 32 - 0.5;
  }
  return out;
}

async function copyOf(rows: number, split: boolean): Promise<StoredIndex> {
  const index = await createStoredIndex(DIM, { pruneFrom: Number.POSITIVE_INFINITY, split });
  index.reserve(rows);
  const v = new Float32Array(DIM);
  const unit = new Float32Array(DIM);
  const scratch = new Float64Array(DIM);
  const code = new Uint8Array(CODE_HEADER + DIM);
  for (let seq = 0; seq < rows; seq++) {
    unitRow(vectorOf(seq, v), DIM, scratch, unit);
    index.addCode(seq, encodeRow(unit, DIM, code));
  }
  return index;
}

const fetchRows = async (seqs: number[]) => seqs.map((seq) => ({ seq, vector: vectorOf(seq), item: seq }));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const load = () => loadavg()[0]!.toFixed(1);
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

async function scans() {
  const t0 = performance.now();
  const copy = await copyOf(ROWS, true);
  console.log(
    `${ROWS} rows loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s; copy ${mib(copy.bytes)}; split across ${copy.threads} threads (${availableParallelism()} cores); load ${load()}`,
  );
  // the same rows on this thread alone: a second copy would double the memory, so the same copy's pass is forced onto
  // one thread by a store made without the split (same rows, its own memory)
  const single = await copyOf(ROWS, false);
  const queries = Array.from({ length: QUERIES }, (_, i) => vectorOf(10_000_000 + i));
  const times = { split: [] as number[], single: [] as number[], floorSplit: [] as number[], floorSingle: [] as number[] };
  // the process's CPU time (every thread) of the split scan and of its read: the work each does, which the load
  // changes far less than the wall time (a thread waiting on another spends none)
  const cpu = { split: [] as number[], floorSplit: [] as number[] };
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let identical = 0;
  for (const [i, q] of queries.entries()) {
    let c = cpuMs();
    let t = performance.now();
    copy.readAll();
    times.floorSplit.push(performance.now() - t);
    cpu.floorSplit.push(cpuMs() - c);
    c = cpuMs();
    t = performance.now();
    const a = await copy.search(q, K, fetchRows, { exhaustive: true });
    times.split.push(performance.now() - t);
    cpu.split.push(cpuMs() - c);
    t = performance.now();
    single.readAll();
    times.floorSingle.push(performance.now() - t);
    t = performance.now();
    const b = await single.search(q, K, fetchRows, { exhaustive: true });
    times.single.push(performance.now() - t);
    if (JSON.stringify(a) === JSON.stringify(b)) identical += 1;
    if (i === 0) console.log(`first answer: ${a.map((h) => `${h.seq}:${h.score.toFixed(4)}`).join(' ')}`);
  }
  const line = (name: string, xs: number[]) =>
    `${name.padEnd(34)} p50 ${pct(xs, 50).toFixed(1).padStart(6)} ms  p99 ${pct(xs, 99).toFixed(1).padStart(6)} ms`;
  console.log(line(`full scan, split (${copy.threads} threads)`, times.split));
  console.log(line(`bare read, split (${copy.threads} threads)`, times.floorSplit));
  console.log(line('full scan, this thread alone', times.single));
  console.log(line('bare read, this thread alone', times.floorSingle));
  console.log(
    `split scan / split read p50 ${(pct(times.split, 50) / pct(times.floorSplit, 50)).toFixed(2)}x; single scan / split scan ${(pct(times.single, 50) / pct(times.split, 50)).toFixed(2)}x; ${identical}/${QUERIES} answers identical; load ${load()}`,
  );
  console.log(
    `CPU time, every thread: split scan p50 ${pct(cpu.split, 50).toFixed(1)} ms, split read ${pct(cpu.floorSplit, 50).toFixed(1)} ms: ${(pct(cpu.split, 50) / pct(cpu.floorSplit, 50)).toFixed(2)}x`,
  );
  copy.release();
  single.release();
}

async function rebuilds() {
  const rss = () => process.memoryUsage().rss;
  const start = rss();
  let copy: StoredIndex | undefined;
  const line: string[] = [];
  for (let i = 0; i < REBUILDS; i++) {
    const next = await copyOf(REBUILD_ROWS, true);
    await next.search(vectorOf(99), K, fetchRows);
    copy?.release(); // replaced, as indexes.ts does with a copy caught up
    copy = next;
    await new Promise((r) => setTimeout(r, 1500)); // the release's collections (split.ts) have run
    line.push(mib(rss()));
  }
  console.log(
    `${REBUILDS} copies of ${REBUILD_ROWS} rows (${copy?.threads} threads), each replacing the last: RSS ${mib(start)} before, then ${line.join(', ')}; load ${load()}`,
  );
}

console.log(
  `load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} at the start`,
);
if (REBUILDS > 0) await rebuilds();
if (ROWS > 0) await scans();
