import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropLakeSchema, LAKE_FILES, lakeEnv, lakeTokens, runSchema } from '../support/lake.ts';
import { openFreshPostgres } from '../support/pg.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { trinoStatement, trinoToken } from '../support/trino.ts';

// Imports on the real servers (issue 32, item 3): the rows of tpch.tiny.orders, read as the caller on Trino, embedded
// and written as Parquet files that Trino registers in the collection's Iceberg table. The counts are checked against
// Trino itself: every key once, none missing, none twice.

const ORDERS = {
  source: 'tpch.tiny.orders',
  text: 'o_comment',
  key: 'o_orderkey',
  metadata: ['o_orderdate', 'o_orderpriority', 'o_totalprice'],
};

describe('imports into a lake collection (Trino, Iceberg, MinIO, Postgres)', () => {
  let h: RetrievalHarness;
  let ca: string;
  let cleanup: () => Promise<void>;
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
    const opened = await openFreshPostgres('lake_import');
    cleanup = opened.cleanup;
    h = await retrievalHarness(opened.db, {
      env: { ...lake.env, ...LAKE_FILES, SVC_RAG_LAKE_SCHEMA: LAKE_SCHEMA, SVC_EMBED_DIM: '64', SVC_RAG_IMPORT_FILE_ROWS: '400' },
      tokens: await lakeTokens([who.engineer.user, who.analyst.user, who.admin.user]),
    });
    const created = await h.json('POST', '/collections', who.engineer, {
      slug: 'orders',
      name: 'orders',
      allowed_roles: [],
      backend: 'lake',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const [row] = await h.db.query<{ chunk_store: string }>(`SELECT chunk_store FROM retrieval_collections WHERE slug = 'orders'`);
    table = `${LAKE_SCHEMA}."${row!.chunk_store}"`;
  }, 600_000);

  afterAll(async () => {
    if (ca) await dropLakeSchema(LAKE_SCHEMA, ca);
    await h?.close();
    await cleanup?.();
  }, 120_000);

  async function untilSettled(id: string, seen: number[] = []) {
    for (let i = 0; i < 1200; i++) {
      const got = await h.json('GET', `/collections/orders/imports/${id}`, who.engineer);
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      seen.push(got.body.rows_done);
      if (got.body.status !== 'running') return got.body;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error('the import did not finish in 5 minutes');
  }

  it('embeds every row of a Trino table once, reports its progress, and answers questions from it', async () => {
    const started = await h.json('POST', '/collections/orders/imports', who.engineer, ORDERS);
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(started.body).toMatchObject({ status: 'running', rows_total: 15000, rows_done: 0, parts: 16, source: 'tpch.tiny.orders' });
    const seen: number[] = [];
    const done = await untilSettled(started.body.import_id, seen);
    expect(done).toMatchObject({ status: 'done', rows_total: 15000, rows_done: 15000, parts_done: 16, eta_seconds: 0 });
    // the progress moved: values between none and all were seen
    expect(
      seen.some((n) => n > 0 && n < 15000),
      JSON.stringify(seen),
    ).toBe(true);
    expect(await service(`SELECT count(*), count(DISTINCT import_key), count(DISTINCT chunk_id) FROM ${table}`)).toEqual([
      [15000, 15000, 15000],
    ]);
    // the metadata columns hold the source's values
    const [orders] = await service(
      `SELECT CAST(o_orderkey AS varchar), o_orderdate, o_orderpriority, o_comment FROM tpch.tiny.orders WHERE o_orderkey = 7`,
    );
    expect(await service(`SELECT import_key, o_orderdate, o_orderpriority, text FROM ${table} WHERE import_key = '7'`)).toEqual([orders]);

    const documents = await h.json('GET', '/collections/orders/documents', who.engineer);
    expect(documents.body.documents).toEqual([
      expect.objectContaining({ filename: 'tpch.tiny.orders', chunk_count: 15000, status: 'INDEXED' }),
    ]);
    const asked = await h.json('POST', '/collections/orders/query', who.engineer, {
      question: String(orders![3]),
      mode: 'dense',
      top_k: 3,
    });
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    expect(asked.body.chunks[0]).toMatchObject({ text: orders![3], filename: 'tpch.tiny.orders' });
  }, 600_000);

  it('is idempotent: the same import asked again is the same import, and adds no row', async () => {
    const again = await h.json('POST', '/collections/orders/imports', who.engineer, ORDERS);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ status: 'done', rows_done: 15000 });
    expect(await service(`SELECT count(*) FROM ${table}`)).toEqual([[15000]]);
  });

  it("keeps each import's keys its own: two sources whose keys coincide keep both rows", async () => {
    const nation = await h.json('POST', '/collections/orders/imports', who.engineer, {
      source: 'tpch.tiny.nation',
      text: 'n_comment',
      key: 'n_nationkey',
    });
    const region = await h.json('POST', '/collections/orders/imports', who.engineer, {
      source: 'tpch.tiny.region',
      text: 'r_comment',
      key: 'r_regionkey',
    });
    expect([nation.status, region.status]).toEqual([202, 202]);
    for (const i of [nation.body, region.body])
      expect(await untilSettled(i.import_id)).toMatchObject({ status: 'done', rows_done: i.rows_total });
    // keys 0 to 4 are in both: 25 nations and 5 regions, each once
    expect(
      await service(
        `SELECT file_name, count(*), count(DISTINCT import_key) FROM ${table} WHERE file_name <> 'tpch.tiny.orders' GROUP BY 1 ORDER BY 1`,
      ),
    ).toEqual([
      ['tpch.tiny.nation', 25, 25],
      ['tpch.tiny.region', 5, 5],
    ]);
    expect(await service(`SELECT count(*) FROM ${table}`)).toEqual([[15030]]);
  }, 300_000);

  it('refuses what it cannot do with a message that says why', async () => {
    const memory = await h.json('POST', '/collections', who.engineer, {
      slug: 'in-memory',
      name: 'm',
      allowed_roles: [],
      backend: 'memory',
    });
    expect(memory.status).toBe(201);
    const onMemory = await h.json('POST', '/collections/in-memory/imports', who.engineer, ORDERS);
    expect(onMemory.status).toBe(409);
    expect(onMemory.body.detail).toMatch(/lake collection/);
    const badColumn = await h.json('POST', '/collections/orders/imports', who.engineer, { ...ORDERS, text: 'no_such_column' });
    expect(badColumn.status).toBe(422);
    expect(badColumn.body.detail).toMatch(/no_such_column/i);
    const shadow = await h.json('POST', '/collections/orders/imports', who.engineer, { ...ORDERS, metadata: ['text'] });
    expect(shadow.status).toBe(400);
    // Trino's rules keep the analyst off tpch's suppliers: refused, as the caller, before anything is written
    const analyst = await h.json('POST', '/collections/orders/imports', who.analyst, {
      source: 'tpch.tiny.supplier',
      text: 's_comment',
      key: 's_suppkey',
    });
    expect(analyst.status, JSON.stringify(analyst.body)).toBe(403);
    expect(analyst.body.detail).toMatch(/Trino/);
    expect((await h.json('GET', '/collections/orders/imports', who.engineer)).body.imports).toHaveLength(3);
  });

  it('refuses to embed personal data for a caller who sees it masked, in any part of the import', async () => {
    const customers = { source: 'tpch.tiny.customer', text: 'c_comment', key: 'c_custkey' };
    const refusals = [
      { ...customers, text: 'c_name' },
      { ...customers, text: "c_comment || ' ' || c_address" },
      { ...customers, metadata: ['c_phone'] },
      { ...customers, key: 'c_phone' },
      { source: 'SELECT c_custkey AS id, c_name AS who FROM tpch.tiny.customer', text: 'who', key: 'id' },
    ];
    for (const body of refusals) {
      const refused = await h.json('POST', '/collections/orders/imports', who.analyst, body);
      expect(refused.status, JSON.stringify(body)).toBe(403);
      expect(refused.body.detail).toMatch(/personal data \(tpch\.tiny\.customer\.c_/);
    }
    expect((await h.json('GET', '/collections/orders/imports', who.engineer)).body.imports).toHaveLength(3);
    // the same import for a role that reads personal data unmasked is created (here left to svc embed: no workers)
    const engineer = await h.json('POST', '/collections/orders/imports', who.engineer, { ...customers, text: 'c_name', workers: 0 });
    expect(engineer.status, JSON.stringify(engineer.body)).toBe(202);
    // a column that is not personal is the analyst's to import
    const allowed = await h.json('POST', '/collections/orders/imports', who.analyst, { ...customers, workers: 0 });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(202);
    for (const i of [engineer.body, allowed.body]) {
      const cancelled = await h.json('DELETE', `/collections/orders/imports/${i.import_id}`, who.engineer);
      expect(cancelled.body.status).toBe('cancelled');
    }
  });
});
