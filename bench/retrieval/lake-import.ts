// The import of a Trino table into a lake collection at scale (issue 32, item 3): `svc embed` in N shards at once,
// one shard SIGKILLed part-way and started again, then every key of the source counted in the collection's table
// (no duplicate, no gap) against Trino's own count. Prints rows a second with the offline embedder, or through a
// scripted OpenAI-compatible gateway answering each batch in a fixed time (--gateway-ms).
//
//   npx tsx bench/retrieval/lake-import.ts                       # tpch.sf1.orders, 1 500 000 rows, 64 dimensions
//   npx tsx bench/retrieval/lake-import.ts --source tpch.tiny.orders --gateway-ms 50
//
// Needs the integration servers (scripts/start-trino.sh starts Trino with Postgres and MinIO).
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openPostgres } from '../../src/platform/db/index.ts';
import { dropLakeSchema, embedCommandEnv, LAKE_FILES, lakeEnv, lakeTokens, runSchema } from '../../tests/support/lake.ts';
import { freshDatabase } from '../../tests/support/pg.ts';
import { retrievalHarness, who } from '../../tests/support/retrieval.ts';
import { startScriptedGateway } from '../../tests/support/scripted-gateway.ts';
import { trinoStatement, trinoToken } from '../../tests/support/trino.ts';

const { values: args } = parseArgs({
  options: {
    source: { type: 'string', default: 'tpch.sf1.orders' },
    text: { type: 'string', default: 'o_comment' },
    key: { type: 'string', default: 'o_orderkey' },
    dim: { type: 'string', default: '64' },
    shards: { type: 'string', default: '2' },
    workers: { type: 'string', default: '1' },
    'kill-at': { type: 'string', default: '0.5' },
    'gateway-ms': { type: 'string' },
    'file-rows': { type: 'string', default: '25000' },
    'part-rows': { type: 'string', default: '50000' },
    'embed-batch': { type: 'string', default: '256' },
  },
});
const shards = Number(args.shards);
const killAt = Number(args['kill-at']);

const lake = await lakeEnv();
const schema = runSchema();
const fresh = await freshDatabase('bench_lake_import');
const db = openPostgres(fresh.cfg);
const gateway = args['gateway-ms']
  ? await startScriptedGateway({ dim: Number(args.dim), embedDelayMs: Number(args['gateway-ms']), record: false })
  : undefined;
const settings: Record<string, string> = {
  ...lake.env,
  SVC_RAG_LAKE_SCHEMA: schema,
  ...LAKE_FILES,
  SVC_EMBED_DIM: args.dim,
  SVC_EMBED_BATCH_SIZE: args['embed-batch'],
  SVC_RAG_IMPORT_FILE_ROWS: args['file-rows'],
  SVC_RAG_IMPORT_PART_ROWS: args['part-rows'],
  SVC_RAG_IMPORT_CLAIM_TIMEOUT_MS: '5000',
  SVC_RAG_LAKE_TIMEOUT_MS: '600000',
  // an import of millions of rows is past the default 200 000 embedded chunks an hour a user
  SVC_LIMIT_RETRIEVAL_EMBEDDINGS: '100000000/h',
  ...(gateway ? { SVC_EMBED_URL: gateway.url, SVC_EMBED_MODEL: 'svc-embed' } : {}),
};
const h = await retrievalHarness(db, { env: settings, tokens: await lakeTokens(['eve']), conformance: false });
const created = await h.json('POST', '/collections', who.engineer, {
  slug: 'bench-import',
  name: 'import',
  allowed_roles: [],
  backend: 'lake',
});
if (created.status !== 201) throw new Error(`collection: ${JSON.stringify(created.body)}`);
const [{ chunk_store } = { chunk_store: '' }] = await db.query<{ chunk_store: string }>(`SELECT chunk_store FROM retrieval_collections`);
const table = `${schema}."${chunk_store}"`;
const env = await embedCommandEnv(settings, fresh.cfg, 'eve', '6h');

const embed = (extra: string[]) => {
  const child = spawn(
    join(process.cwd(), 'bin/svc'),
    ['embed', 'bench-import', '--user', 'eve', '--roles', 'svc-engineer', '--no-progress', '--workers', args.workers, ...extra],
    {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return { child, exited: new Promise<number | null>((r) => child.on('exit', (code) => r(code))), stderr: () => err };
};
const progress = async () =>
  (
    await db.query<{ id: string; total: number; rows: number; status: string; error: string | null }>(
      `SELECT i.id, i.status, i.error, i.rows_total::float8 AS total,
         (SELECT coalesce(sum(rows_done), 0)::float8 FROM retrieval_import_splits WHERE import_id = i.id) AS rows
       FROM retrieval_imports i`,
    )
  )[0];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const spec = ['--source', args.source, '--text', args.text, '--key', args.key];
const t0 = performance.now();
const first = embed([...spec, '--shard', `0/${shards}`]);
while (!(await progress())) {
  if (first.child.exitCode !== null) throw new Error(`svc embed stopped: ${first.stderr()}`);
  await sleep(500);
}
const { id, total } = (await progress())!;
const created_s = (performance.now() - t0) / 1000;
console.log(`import ${id}: ${total} rows counted and the import created in ${created_s.toFixed(1)} s`);
const others = Array.from({ length: shards - 1 }, (_, i) => embed(['--import', id, '--shard', `${i + 1}/${shards}`]));
let killedAt: number | undefined;
let resumed: ReturnType<typeof embed> | undefined;
const running: { exited: Promise<number | null>; child: ChildProcess }[] = [first, ...others];
for (let last = -1; ; ) {
  const p = (await progress())!;
  if (p.rows !== last) {
    last = p.rows;
    const s = (performance.now() - t0) / 1000;
    console.log(`${s.toFixed(0).padStart(5)} s  ${p.rows}/${p.total} rows  ${(p.rows / s).toFixed(0)} rows/s`);
  }
  if (killedAt === undefined && killAt > 0 && p.rows >= killAt * p.total) {
    first.child.kill('SIGKILL');
    await first.exited;
    killedAt = p.rows;
    console.log(`shard 0 killed (SIGKILL) at ${p.rows} rows; started again`);
    resumed = embed(['--import', id, '--shard', `0/${shards}`]);
    running.push(resumed);
  }
  if (p.status !== 'running') break;
  if (running.every((r) => r.child.exitCode !== null || r.child.signalCode !== null)) break;
  await sleep(1000);
}
for (const r of [first, ...others, ...(resumed ? [resumed] : [])]) {
  if (r === first && killedAt !== undefined) continue;
  const code = await r.exited;
  if (code !== 0) console.log(`a shard exited ${code}: ${r.stderr().slice(-2000)}`);
}
const seconds = (performance.now() - t0) / 1000;
const token = await trinoToken('svc-service');
const count = async (statement: string) => (await trinoStatement(statement, token, lake.ca)).rows[0] as number[];
const [rows, keys] = await count(`SELECT count(*), count(DISTINCT import_key) FROM ${table}`);
const [sourceKeys] = await count(`SELECT count(DISTINCT ${args.key}) FROM ${args.source}`);
const [missing] = await count(
  `SELECT count(*) FROM ${args.source} s LEFT JOIN ${table} t ON t.import_key = CAST(s.${args.key} AS varchar) WHERE t.import_key IS NULL`,
);
const end = (await progress())!;
console.log(
  '\n| source | rows | dim | embedder | shards × workers | killed at | seconds | rows/s | table rows | distinct keys | source keys | missing | status |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
console.log(
  `| ${args.source} | ${total} | ${args.dim} | ${gateway ? `scripted gateway, ${args['gateway-ms']} ms a batch of ${args['embed-batch']}` : 'offline'} | ${shards} × ${args.workers} | ${killedAt ?? '-'} | ${seconds.toFixed(0)} | ${(total / seconds).toFixed(0)} | ${rows} | ${keys} | ${sourceKeys} | ${missing} | ${end.status} |`,
);
if (end.error) console.log(`\nthe import's error: ${end.error}`);
const ok = rows === keys && keys === sourceKeys && missing === 0 && end.status === 'done';
console.log(ok ? '\nevery key of the source once: no duplicate, no gap' : '\nMISMATCH: see the table');
await dropLakeSchema(schema, lake.ca);
await h.close();
await gateway?.close();
await db.close();
await fresh.drop();
process.exit(ok ? 0 : 1);
