// Where a dense question's time goes, for questions new to the replica and the same asked again, once the copy's
// clusters and finer code are in: each SQL statement's time by kind (the database wrapped), when in the call it starts
// and ends (the gaps are svc's own CPU), the vectors a statement reads, and what the statements leave of the call (less
// than nothing where two ran side by side). On the bench's kept collections (bench/retrieval/index.ts builds them).
// Run: npx tsx bench/retrieval/new-questions.ts [--size 100000] [--dist clustered|random] [--queries 100]
import { loadavg } from 'node:os';
import type { Database, Sql } from '../../src/platform/db/index.ts';
import type { Embedder } from '../../src/platform/gateway/index.ts';
import { queryCollection } from '../../src/retrieval/query.ts';
import { kernelModule } from '../../src/retrieval/vector-index/kernel.ts';
import { splitThreads, startSplitWorkers } from '../../src/retrieval/vector-index/split.ts';
import { retrievalHarness } from '../../tests/support/retrieval.ts';
import { ensureCollection } from './collection.ts';
import { DIM, ensureDataset, openBenchDatabase } from './datasets.ts';
import { pct, queriesFor, time } from './questions.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('size', '100000'));
const DIST = arg('dist', 'clustered') as 'clustered' | 'random';
const Q = Number(arg('queries', '100'));
const admin = { user: 'bench', roles: ['svc-admin'], groups: [] };

const kindOf = (text: string) =>
  text.includes('vector_send(k.embedding)')
    ? 'vectors'
    : text.includes('k.text')
      ? 'text'
      : text.includes('retrieval_collections')
        ? 'head'
        : /insert/i.test(text)
          ? 'audit'
          : text.slice(0, 40).replace(/\s+/g, ' ');
let stages: Record<string, number> = {};
let rowsRead: number[] = [];
let queryStart = 0;
let starts: Record<string, number[]> = {};
let ends: Record<string, number[]> = {};
function timed<T extends Sql>(sql: T): T {
  return new Proxy(sql, {
    get(target, prop, receiver) {
      if (prop === 'query')
        return async (text: string, params?: readonly unknown[], options?: unknown) => {
          const t = performance.now();
          const k0 = kindOf(text);
          (starts[k0] ??= []).push(t - queryStart);
          try {
            return await (target.query as (...a: unknown[]) => Promise<unknown>)(text, params, options);
          } finally {
            const k = kindOf(text);
            stages[k] = (stages[k] ?? 0) + performance.now() - t;
            (ends[k] ??= []).push(performance.now() - queryStart);
            if (k === 'vectors') rowsRead.push((params?.[1] as unknown[] | undefined)?.length ?? 0);
          }
        };
      if (prop === 'transaction')
        return (fn: (tx: Sql) => Promise<unknown>) => (target as unknown as Database).transaction((tx) => fn(timed(tx)));
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

const db0 = await openBenchDatabase();
await ensureDataset(db0, DIST, N, console.log, { hnsw: false });
const slug = await ensureCollection(db0, DIST, N);
const queries = await queriesFor(db0, DIST, 3 * Q + 1);
const vectorOf = new Map(queries.map((v, i) => [String(i), v] as const));
const embedder: Embedder = { model: 'bench', dim: DIM, offline: true, embed: async ([q]) => [vectorOf.get(q!)!] };
const db = timed(db0);
const h = await retrievalHarness(db, {
  embedder,
  env: { SVC_RAG_MEMORY_INDEX_MAX_CHUNKS: String(Math.max(N, 1_000_000)), SVC_RAG_PRUNING_FROM_CHUNKS: '20000' },
  conformance: false,
});
await startSplitWorkers(await kernelModule(), splitThreads());
await queryCollection(h.deps, admin, slug, { question: String(3 * Q), top_k: 10, mode: 'dense' });
while (h.deps.indexes.pruning(slug)?.state === 'building') await new Promise((r) => setTimeout(r, 20));
for (let last = -1, still = 0; still < 50; await new Promise((r) => setTimeout(r, 20))) {
  const p = h.deps.indexes.pruning(slug)!;
  if (p.state !== 'built' || p.refined >= p.rows) break;
  still = p.refined === last ? still + 1 : 0;
  last = p.refined;
}
console.log('pruning', JSON.stringify(h.deps.indexes.pruning(slug)));

async function round(label: string, from: number) {
  starts = {};
  ends = {};
  rowsRead = [];
  const totals: number[] = [];
  const per: Record<string, number[]> = {};
  for (let i = from; i < from + Q; i++) {
    stages = {};
    queryStart = performance.now();
    const [t] = await time(() => queryCollection(h.deps, admin, slug, { question: String(i), top_k: 10, mode: 'dense' }));
    totals.push(t);
    let sql = 0;
    for (const [k, v] of Object.entries(stages)) {
      (per[k] ??= []).push(v);
      sql += v;
    }
    (per['(not sql)'] ??= []).push(t - sql);
  }
  if (rowsRead.length)
    console.log(`  vectors read a statement: p50 ${pct(rowsRead, 50)}, max ${Math.max(...rowsRead)}, statements ${rowsRead.length}`);
  rowsRead = [];
  console.log(
    `${label}: total p50 ${pct(totals, 50).toFixed(2)} mean ${(totals.reduce((a, b) => a + b) / Q).toFixed(2)}; load ${loadavg()[0]!.toFixed(2)}`,
  );
  for (const k of Object.keys(starts))
    console.log(`  ${k.padEnd(42)} starts at p50 ${pct(starts[k]!, 50).toFixed(2)}, ends at p50 ${pct(ends[k]!, 50).toFixed(2)}`);
  starts = {};
  ends = {};
  for (const [k, v] of Object.entries(per))
    console.log(`  ${k.padEnd(42)} p50 ${pct(v, 50).toFixed(2)} mean ${(v.reduce((a, b) => a + b) / v.length).toFixed(2)} (${v.length})`);
}
await round('new', 0);
await round('again', 0);
await round('new', Q);
await round('again', Q);
await h.close();
await db0.close();
