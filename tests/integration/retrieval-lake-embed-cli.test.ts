import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type Database } from '../../src/platform/db/index.ts';
import { dropLakeSchema, embedCommandEnv, LAKE_FILES, lakeEnv, lakeTokens, runSchema } from '../support/lake.ts';
import { freshDatabase } from '../support/pg.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { trinoStatement, trinoToken } from '../support/trino.ts';

// `svc embed` on the real servers: two shards at once, one killed (SIGKILL) in the middle of its parts and started
// again; the collection's table then holds every key of the source once, checked against Trino's own count, and the
// progress bar moved. A killed worker's part is taken back once its claim lapses (3 s here).

type Run = { child: ChildProcess; stderr: () => string; exited: Promise<number | null> };

describe('svc embed: shards, a kill and a resume (Trino, Iceberg, MinIO, Postgres)', () => {
  let h: RetrievalHarness;
  let db: Database;
  let ca: string;
  let drop: () => Promise<void>;
  let env: NodeJS.ProcessEnv;
  let table: string;
  const LAKE_SCHEMA = runSchema();
  const service = async (statement: string) => {
    const r = await trinoStatement(statement, await trinoToken('svc-service'), ca);
    expect(r.error, statement).toBeUndefined();
    return r.rows;
  };

  beforeAll(async () => {
    const lake = await lakeEnv();
    ca = lake.ca;
    const fresh = await freshDatabase('lake_embed');
    drop = fresh.drop;
    db = openPostgres(fresh.cfg);
    const settings = {
      ...lake.env,
      SVC_RAG_LAKE_SCHEMA: LAKE_SCHEMA,
      ...LAKE_FILES,
      SVC_EMBED_DIM: '64',
      SVC_RAG_IMPORT_FILE_ROWS: '150',
      SVC_RAG_IMPORT_CLAIM_TIMEOUT_MS: '3000',
    };
    h = await retrievalHarness(db, { env: settings, tokens: await lakeTokens([who.engineer.user]) });
    const created = await h.json('POST', '/collections', who.engineer, {
      slug: 'cli-orders',
      name: 'orders',
      allowed_roles: [],
      backend: 'lake',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const [row] = await db.query<{ chunk_store: string }>(`SELECT chunk_store FROM retrieval_collections WHERE slug = 'cli-orders'`);
    table = `${LAKE_SCHEMA}."${row!.chunk_store}"`;
    env = await embedCommandEnv(settings, fresh.cfg, 'eve');
  }, 600_000);

  afterAll(async () => {
    if (ca) await dropLakeSchema(LAKE_SCHEMA, ca);
    await h?.close();
    await db?.close();
    await drop?.();
  }, 120_000);

  function embed(args: string[]): Run {
    const child = spawn(join(process.cwd(), 'bin/svc'), ['embed', 'cli-orders', '--user', 'eve', '--roles', 'svc-engineer', ...args], {
      env,
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.resume();
    return { child, stderr: () => err, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
  }

  const progress = async () =>
    (
      await db.query<{ id: string; rows: number; status: string }>(
        `SELECT i.id, i.status, (SELECT coalesce(sum(rows_done), 0)::int FROM retrieval_import_splits WHERE import_id = i.id) AS rows
         FROM retrieval_imports i WHERE collection_slug = 'cli-orders'`,
      )
    )[0];

  async function until(what: string, test: () => Promise<boolean>, ms = 300_000) {
    for (const end = Date.now() + ms; Date.now() < end; ) {
      if (await test()) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it('runs two shards at once, survives a kill, and leaves every key once', async () => {
    const source = ['--source', 'tpch.tiny.orders', '--text', 'o_comment', '--key', 'o_orderkey', '--workers', '2'];
    const first = embed([...source, '--shard', '0/2', '--no-progress']);
    await until('the import to exist', async () => (await progress()) !== undefined, 120_000);
    const id = (await progress())!.id;
    const second = embed(['--import', id, '--shard', '1/2']);
    // killed with rows of its parts written and others not
    await until('rows to be written', async () => ((await progress())?.rows ?? 0) >= 3000);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();
    expect(await second.exited, second.stderr()).toBe(0);
    const between = (await progress())!;
    expect(between.status).toBe('running');
    expect(between.rows).toBeLessThan(15000);

    const resumed = embed(['--import', id, '--shard', '0/2', '--no-progress']);
    expect(await resumed.exited, resumed.stderr()).toBe(0);
    expect(await progress()).toMatchObject({ status: 'done', rows: 15000 });
    expect(await service('SELECT count(DISTINCT o_orderkey) FROM tpch.tiny.orders')).toEqual([[15000]]);
    // no gap and no duplicate: every key of the source once, and nothing else
    expect(await service(`SELECT count(*), count(DISTINCT import_key) FROM ${table}`)).toEqual([[15000, 15000]]);
    expect(
      await service(
        `SELECT count(*) FROM tpch.tiny.orders o LEFT JOIN ${table} t ON t.import_key = CAST(o.o_orderkey AS varchar) WHERE t.import_key IS NULL`,
      ),
    ).toEqual([[0]]);

    // the bar moved: cli-progress draws the rows done as they grow
    const drawn = [...second.stderr().matchAll(/(\d+)\/15000 rows/g)].map((m) => Number(m[1]));
    expect(new Set(drawn).size, second.stderr()).toBeGreaterThan(1);
  }, 900_000);
});
