// A measure for SVC_RAG_PRUNING_FROM_CHUNKS's default: at each size, the copy's search p50 as a full scan and with
// its clusters (built in the background), on clustered (Gaussian mixture) and random unit vectors of 768 dimensions,
// in memory (no database: the rows read back come from an array), with the build's time and the time it held the
// calling thread. Run: npx tsx bench/retrieval/pruning-threshold.ts [--sizes 5000,10000,20000,50000] [--queries 200]
import { loadavg } from 'node:os';
import { CODE_HEADER, createStoredIndex, encodeRow, unitRow } from '../../src/retrieval/vector-index/index.ts';
import { mulberry32 } from '../../tests/support/random-vectors.ts';
import { pct } from './questions.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const SIZES = arg('sizes', '5000,10000,20000,50000').split(',').map(Number);
const QUERIES = Number(arg('queries', '200'));
const DIM = 768;

function vectors(n: number, clustered: boolean, seed: number): Float32Array[] {
  const next = mulberry32(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  const centres = Array.from({ length: 1000 }, () => Float32Array.from({ length: DIM }, () => gauss() / Math.sqrt(DIM)));
  const noise = 0.5 / Math.sqrt(DIM);
  return Array.from({ length: n }, () =>
    clustered
      ? Float32Array.from(centres[Math.floor(next() * 1000)]!, (x) => x + noise * gauss())
      : Float32Array.from({ length: DIM }, gauss),
  );
}

for (const n of SIZES) {
  for (const clustered of [true, false]) {
    const rows = vectors(n + QUERIES, clustered, n);
    const index = await createStoredIndex(DIM, { pruneFrom: 1 });
    const scratch = new Float64Array(DIM);
    for (let r = 0; r < n; r++)
      index.addCode(r + 1, encodeRow(unitRow(rows[r]!, DIM, scratch, new Float32Array(DIM)), DIM, new Uint8Array(CODE_HEADER + DIM)));
    const fetch = async (seqs: number[]) => seqs.map((seq) => ({ seq, vector: rows[seq - 1]!, item: seq }));
    const time = async (exhaustive: boolean) => {
      const t: number[] = [];
      for (let q = 0; q < QUERIES; q++) {
        const s = performance.now();
        await index.search(rows[n + q]!, 10, fetch, { exhaustive });
        t.push(performance.now() - s);
      }
      return t;
    };
    const full = await time(true);
    const built = await index.prepareInBackground();
    const pruned = await time(false);
    console.log(
      `${String(n).padStart(7)} ${clustered ? 'clustered' : 'random   '} | full scan p50 ${pct(full, 50).toFixed(2)} ms | with clusters p50 ${pct(pruned, 50).toFixed(2)} ms (${built.state}) | build ${built.buildMs.toFixed(0)} ms in the background, held ${built.heldMs.toFixed(1)} ms, ${built.pauseMs.toFixed(1)} ms at most at once | load ${loadavg()[0]!.toFixed(1)}`,
    );
  }
}
