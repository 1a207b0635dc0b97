// The lake backend (issue 32) against the memory backend and pgvector's exact scan, on the same vectors, in one run
// on real Postgres and the integration Trino (scripts/start-trino.sh, with MinIO and the Iceberg catalog):
//   the memory collection and the peer's table are bench/retrieval's own (datasets.ts, collection.ts: kept in the
//   benchmark database, the HNSW index not needed here); the lake collection holds the same chunks (same ids, seq,
//   text and float32 vectors), written as Parquet files into its Iceberg table and registered by add_files as an
//   import writes them (kept in iceberg.retrieval_bench between runs);
//   each question is asked of the three in turn (dense, top 10, its embedding excluded), so a busy machine slows all
//   alike: p50 and p95, lake/memory and lake/pgvector; the lake's answers against the memory backend's (the same
//   chunks in the same order, scores within 1e-6) and its recall@10 against pgvector's exact answer.
// The import's own rate (rows a second, offline embedder or a scripted gateway) is bench/retrieval/lake-import.ts.
// Run: npx tsx bench/retrieval/index.ts --backend lake [--sizes 100000,1000000] [--dists random] [--queries 30]
import { availableParallelism, loadavg } from 'node:os';
import { copyInt8, readCopyRows, toVector, type Database } from '../../src/platform/db/index.ts';
import type { Embedder } from '../../src/platform/gateway/index.ts';
import { tableOf } from '../../src/retrieval/backends/lake-sql.ts';
import { importFile, type ImportedRow } from '../../src/retrieval/imports/parquet.ts';
import { addFiles, addImportColumns, tableLocation } from '../../src/retrieval/imports/statements.ts';
import { queryCollection } from '../../src/retrieval/query.ts';
import { vectorFromBinary } from '../../src/retrieval/vector-wire.ts';
import { createS3Store } from '../../src/platform/objects/s3-store.ts';
import { lakeEnv, lakeTokens } from '../../tests/support/lake.ts';
import { retrievalHarness, type RetrievalHarness, who } from '../../tests/support/retrieval.ts';
import { trinoStatement, trinoToken } from '../../tests/support/trino.ts';
import { ensureCollection } from './collection.ts';
import { DIM, ensureDataset, openBenchDatabase, type Distribution } from './datasets.ts';
import { pct, queriesFor, time } from './questions.ts';

const K = 10;
const SCHEMA = 'iceberg.retrieval_bench';
const FILE_ROWS = 20_000;
const S3 = { endpoint: 'http://127.0.0.1:19000', accessKeyId: 'svcminio', secretAccessKey: 'svcminio-secret' };

export type LakeBenchOptions = { sizes: number[]; dists: Distribution[]; queries: number };

export async function benchLakeBackend(opts: LakeBenchOptions): Promise<void> {
  const loadBefore = loadavg()[0]!;
  const db = await openBenchDatabase();
  const reports: string[] = [];
  try {
    for (const n of opts.sizes) for (const dist of opts.dists) reports.push(await benchOne(db, dist, n, opts.queries));
  } finally {
    await db.close();
  }
  console.log(
    `\nload average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end, on ${availableParallelism()} cores`,
  );
  console.log(
    '\n| data | backend | p50 ms | p95 ms | / memory (p50) | / pgvector exact (p50) | recall@10 vs exact | same answers as memory |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  console.log(reports.join('\n'));
}

async function benchOne(db: Database, dist: Distribution, n: number, count: number): Promise<string> {
  const data = await ensureDataset(db, dist, n, console.log, { hnsw: false });
  const memorySlug = await ensureCollection(db, dist, n);
  const queries = await queriesFor(db, dist, count);
  const embedder: Embedder = { model: 'bench', dim: DIM, offline: true, embed: async ([q]) => [queries[Number(q)]!] };
  const lake = await lakeEnv();
  const tokens = await lakeTokens(['eve']);
  const h = await retrievalHarness(db, {
    embedder,
    conformance: false,
    env: {
      ...lake.env,
      SVC_RAG_LAKE_SCHEMA: SCHEMA,
      SVC_RAG_MEMORY_INDEX_MAX_CHUNKS: String(Math.max(n, 1_000_000)),
      SVC_RAG_LAKE_TIMEOUT_MS: '600000',
    },
    tokens,
  });
  try {
    const lakeSlug = await ensureLakeCollection(db, h, memorySlug, `lake-${dist}-${n}`, n);
    const eve = { user: 'eve', roles: ['svc-engineer'], groups: [], token: tokens.eve! };
    const ask = (slug: string, i: number) => queryCollection(h.deps, eve, slug, { question: String(i), top_k: K, mode: 'dense' });
    await ask(memorySlug, 0); // the memory backend's copy loads at its first question; the lake's table has no copy
    const times = { memory: [] as number[], lake: [] as number[], exact: [] as number[] };
    let same = 0;
    let recall = 0;
    for (let i = 0; i < count; i++) {
      const [tm, m] = await time(() => ask(memorySlug, i));
      const [tl, l] = await time(() => ask(lakeSlug, i));
      const [te, exact] = await time(() => exactTop(db, data.table, queries[i]!));
      times.memory.push(tm);
      times.lake.push(tl);
      times.exact.push(te);
      const identical =
        l.chunks.length === m.chunks.length &&
        l.chunks.every((c, j) => c.chunk_id === m.chunks[j]!.chunk_id && Math.abs(c.score - m.chunks[j]!.score) <= 1e-6);
      if (identical) same++;
      const ordinals = await ordinalsOf(
        db,
        l.chunks.map((c) => c.chunk_id),
      );
      recall += ordinals.filter((o) => exact.includes(o)).length / K;
      process.stdout.write(`\r${dist} ${n}: question ${i + 1}/${count}`);
    }
    process.stdout.write('\n');
    const p = (xs: number[], q: number) => pct(xs, q).toFixed(1);
    const row = (name: string, xs: number[], extra: string) =>
      `| ${dist} ${n} | ${name} | ${p(xs, 50)} | ${p(xs, 95)} | ${(pct(xs, 50) / pct(times.memory, 50)).toFixed(2)} | ${(pct(xs, 50) / pct(times.exact, 50)).toFixed(2)} | ${extra}`;
    return [
      row('memory (in-process copy)', times.memory, '1.000 | - |'),
      row('pgvector exact scan', times.exact, '1.000 | - |'),
      row('lake (Trino, cosine_distance)', times.lake, `${(recall / count).toFixed(3)} | ${same}/${count} |`),
    ].join('\n');
  } finally {
    await h.close();
  }
}

/** pgvector's exact answer (no index): the peer table's seq of the top K. */
async function exactTop(db: Database, table: string, q: number[]): Promise<number[]> {
  const rows = await db.transaction(async (tx) => {
    await tx.exec('SET LOCAL enable_indexscan = off; SET LOCAL max_parallel_workers_per_gather = 2');
    return tx.query<{ seq: number }>(`SELECT seq FROM ${table} /* exact */ ORDER BY embedding <=> $1::vector LIMIT ${K}`, [toVector(q)]);
  });
  return rows.map((r) => r.seq);
}

async function ordinalsOf(db: Database, ids: string[]): Promise<number[]> {
  const rows = await db.query<{ id: string; ordinal: number }>(
    `SELECT id::text AS id, ordinal FROM retrieval_chunks WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  const byId = new Map(rows.map((r) => [r.id, r.ordinal]));
  return ids.map((id) => byId.get(id)!);
}

/**
 * A lake collection holding the memory collection's chunks: made once, then kept (its table counted). Written as an
 * import writes: Parquet files under the table's location, each registered by add_files.
 */
async function ensureLakeCollection(db: Database, h: RetrievalHarness, memorySlug: string, slug: string, n: number): Promise<string> {
  const lake = h.deps.lake!;
  const service = async (sql: string) => (await trinoStatement(sql, await trinoToken('svc-service'), lake.settings.connection.ca!)).rows;
  let [row] = await db.query<{ chunk_store: string }>(`SELECT chunk_store FROM retrieval_collections WHERE slug = $1`, [slug]);
  if (row) {
    const fqn = tableOf(SCHEMA, row.chunk_store);
    const counted = await service(`SELECT count(*) FROM ${fqn}`).catch(() => [[0]]);
    if (Number(counted[0]?.[0]) === n) return slug;
    await db.query(`DELETE FROM retrieval_collections WHERE slug = $1`, [slug]);
  }
  const created = await h.json('POST', '/collections', who.engineer, {
    slug,
    name: slug,
    allowed_roles: [],
    backend: 'lake',
  });
  if (created.status !== 201) throw new Error(`lake collection: ${JSON.stringify(created.body)}`);
  [row] = await db.query<{ chunk_store: string }>(`SELECT chunk_store FROM retrieval_collections WHERE slug = $1`, [slug]);
  const fqn = tableOf(SCHEMA, row!.chunk_store);
  for (const statement of addImportColumns(fqn, [])) await lake.asService(statement);
  const { bucket, path } = await tableLocation(lake, fqn);
  const files = createS3Store({ ...S3, bucket });
  const [document] = await db.query<{ id: string }>(
    `INSERT INTO retrieval_documents (id, collection_slug, filename, content_type, format, size_bytes, sha256, page_count, status, chunk_count, uploaded_by)
     VALUES (gen_random_uuid(), $1, 'bench.txt', 'text/plain', 'text', 0, $1, 1, 'INDEXED', $2, 'bench') RETURNING id::text AS id`,
    [slug, n],
  );
  const started = performance.now();
  const utf8 = new TextDecoder();
  // a file's rows at a time, by seq: the next file is read once the last one is registered (one commit at a time)
  for (let last = -1, part = 0; ; part++) {
    const rows: ImportedRow[] = [];
    await readCopyRows(
      db,
      `SELECT id::text, seq, text, embedding FROM retrieval_chunks WHERE collection_slug = '${memorySlug}' AND seq > ${last} ORDER BY seq LIMIT ${FILE_ROWS}`,
      ([id, seq, text, vector]) => {
        const chunkId = utf8.decode(id!);
        rows.push({
          chunkId,
          key: chunkId,
          bucket: 0,
          text: utf8.decode(text!),
          seq: copyInt8(seq!),
          embedding: vectorFromBinary(vector!),
          metadata: [],
        });
      },
    );
    if (rows.length === 0) break;
    last = rows.at(-1)!.seq;
    const bytes = importFile(rows, { id: document!.id, filename: 'bench.txt' }, [], BigInt(Date.now()) * 1000n);
    const folder = `${path}/data/bench/${part}`;
    await files.put(`${folder}/part-0.parquet`, bytes);
    await lake.asService(addFiles(fqn, `s3://${bucket}/${folder}`));
    console.log(`${slug}: ${part * FILE_ROWS + rows.length}/${n} rows in the lake, ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  return slug;
}
