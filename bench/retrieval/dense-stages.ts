// Where a dense query's time goes at a large random collection, against the floor (a bare read of the copy's rows):
// each question asked once, then again in turns with the floor (as bench/retrieval/index.ts takes its figure), and of
// those, the whole call, the database statements it makes (by their first words) and the copy's ranking (scan and
// reads back). Then the collection's head read alone: back to back, right after a bare read, and after 40 ms asleep,
// for what a round trip costs once Postgres's backend has gone idle. Profiling aid for docs/benchmarks.md's 1a figure.
// Run: npx tsx bench/retrieval/dense-stages.ts [--size 1000000] [--queries 30]
import { loadavg } from 'node:os';
import type { Database } from '../../src/platform/db/index.ts';
import type { Embedder } from '../../src/platform/gateway/index.ts';
import { queryCollection } from '../../src/retrieval/query.ts';
import { collectionHead } from '../../src/retrieval/store.ts';
import { kernelModule } from '../../src/retrieval/vector-index/kernel.ts';
import { splitThreads, startSplitWorkers } from '../../src/retrieval/vector-index/split.ts';
import { retrievalHarness } from '../../tests/support/retrieval.ts';
import { ensureCollection } from './collection.ts';
import { DIM, openBenchDatabase } from './datasets.ts';
import { pct, queriesFor, time } from './questions.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('size', '1000000'));
const QUERIES = Number(arg('queries', '30'));
const admin = { user: 'bench', roles: ['svc-admin'], groups: [] };

/** Statements' times by their first words, while `on` is set. */
const statements = new Map<string, number[]>();
let on = false;
function timed(db: Database): Database {
  const wrap =
    <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      const t = performance.now();
      try {
        return await fn(...a);
      } finally {
        if (on) {
          const key = String(a[0]).replace(/\s+/g, ' ').trim().slice(0, 60);
          statements.set(key, [...(statements.get(key) ?? []), performance.now() - t]);
        }
      }
    };
  return new Proxy(db, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === 'query' || prop === 'exec') return wrap((value as (...a: unknown[]) => Promise<unknown>).bind(target));
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const raw = await openBenchDatabase();
const db = timed(raw);
const slug = await ensureCollection(raw, 'random', N);
const queries = await queriesFor(raw, 'random', QUERIES);
const embedder: Embedder = { model: 'bench', dim: DIM, offline: true, embed: async ([q]) => [queries[Number(q)]!] };
const h = await retrievalHarness(db, {
  embedder,
  env: { SVC_RAG_MEMORY_INDEX_MAX_CHUNKS: String(Math.max(N, 1_000_000)), SVC_RAG_PRUNING_FROM_CHUNKS: '20000' },
  conformance: false,
});
await startSplitWorkers(await kernelModule(), splitThreads());
const ask = (i: number) => queryCollection(h.deps, admin, slug, { question: String(i), top_k: 10, mode: 'dense' });
await ask(0);
while (h.deps.indexes.pruning(slug)?.state === 'building') await new Promise((r) => setTimeout(r, 20));

const rankIds = h.deps.indexes.rankIds;
const rank: number[] = [];
h.deps.indexes.rankIds = async (...a) => {
  const t = performance.now();
  try {
    return await rankIds(...a);
  } finally {
    if (on) rank.push(performance.now() - t);
  }
};
const whole: number[] = [];
const floor: number[] = [];
const first: number[] = [];
// each question once (its candidates' float rows read from the database, then kept), then again in turns with the
// floor, as the bench's own figure takes them
for (let i = 0; i < QUERIES; i++) {
  const t = performance.now();
  await ask(i);
  first.push(performance.now() - t);
}
const load = loadavg()[0]!;
for (let i = 0; i < QUERIES; i++) {
  let t = performance.now();
  h.deps.indexes.readAll(slug);
  floor.push(performance.now() - t);
  on = true;
  t = performance.now();
  await ask(i);
  whole.push(performance.now() - t);
  on = false;
}
const f = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(2).padStart(7)} ms (n ${xs.length})`;
console.log(`random ${N}, ${QUERIES} queries; load ${load.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end`);
console.log(`first time, alone      ${f(first)}`);
console.log(`floor (bare read)      ${f(floor)}`);
console.log(`whole query            ${f(whole)}  = ${(pct(whole, 50) / pct(floor, 50)).toFixed(2)}x the floor`);
console.log(`rankIds (scan + reads) ${f(rank)}`);
for (const [sql, ts] of statements) console.log(`  ${f(ts)} ${sql}`);
// one statement's round trip, back to back and after the backend went idle (the scan holds both cores ~40 ms)
const headAlone: number[] = [];
const headAfterRead: number[] = [];
const headAfterSleep: number[] = [];
const timeHead = async (into: number[]) => into.push((await time(() => collectionHead(raw, slug)))[0]);
for (let i = 0; i < QUERIES; i++) {
  await timeHead(headAlone);
  h.deps.indexes.readAll(slug);
  await timeHead(headAfterRead);
  await new Promise((resolve) => setTimeout(resolve, 40));
  await timeHead(headAfterSleep);
}
console.log(`head read back to back ${f(headAlone)}`);
console.log(`  after a bare read    ${f(headAfterRead)}`);
console.log(`  after 40 ms asleep   ${f(headAfterSleep)}`);
await h.close();
await raw.close();
