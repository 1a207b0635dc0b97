import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOfflineEmbedder } from '../../src/platform/gateway/index.ts';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { dropLakeSchema, lakeEnv, lakeTokens, runSchema } from '../support/lake.ts';
import { openFreshPostgres } from '../support/pg.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { serviceTrinoEngine, trinoStatement, trinoToken } from '../support/trino.ts';

// Hybrid SQL (issue 32, item 4) on the real servers: tpch.tiny.orders and tpch.tiny.customer are imported into lake
// collections through retrieval, then explore on the integration Trino runs statements that call
// semantic_distance(<column>, '<phrase>'). Every allowed shape's rows equal a reference the test computes itself:
// the join written by hand, run on Trino as the same user, with the phrase embedded by the same offline embedder.
// Explore is set up so that the engineer (eve) sees personal columns masked (SVC_PII_BYPASS_ROLES=svc-admin): her
// reference rows are Trino's with the personal columns replaced by the mask, as for any other statement.

const DIM = 64;
const S3 = {
  SVC_RAG_LAKE_S3_ENDPOINT_URL: 'http://127.0.0.1:19000',
  SVC_OBJSTORE_ACCESS_KEY_ID: 'svcminio',
  SVC_OBJSTORE_SECRET_ACCESS_KEY: 'svcminio-secret',
};
const embedder = createOfflineEmbedder(DIM);
const vector = async (phrase: string) => `CAST(json_parse('${JSON.stringify((await embedder.embed([phrase]))[0])}') AS array(double))`;

let ca = '';
let cleanup: () => Promise<void>;
let r: RetrievalHarness;
let h: ExploreHarness;
const LAKE_SCHEMA = runSchema();
const lake: Record<string, { table: string; document: string }> = {};

/** The reference: a statement on Trino as eve, her own token, no svc in between. */
async function asEve(sql: string): Promise<unknown[][]> {
  const res = await trinoStatement(sql, await trinoToken('eve'), ca);
  if (res.status !== 200 || res.error) throw new Error(`${sql}: ${res.error ?? `HTTP ${res.status}`}`);
  return res.rows;
}

/** The join by hand: the rows of the import's document in the collection's table, by key. */
const embeddings = (collection: string) =>
  `(SELECT import_key, embedding FROM ${lake[collection]!.table} WHERE document_id = '${lake[collection]!.document}')`;

async function importInto(slug: string, owner: typeof who.engineer, allowed: string[], spec: Record<string, unknown>) {
  const created = await r.json('POST', '/collections', owner, { slug, name: slug, allowed_roles: allowed, backend: 'lake' });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const started = await r.json('POST', `/collections/${slug}/imports`, owner, spec);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  for (let i = 0; i < 2400; i++) {
    const got = await r.json('GET', `/collections/${slug}/imports/${started.body.import_id}`, owner);
    if (got.body.status === 'done') break;
    expect(got.body.status, JSON.stringify(got.body)).toBe('running');
    await new Promise((done) => setTimeout(done, 250));
  }
  const [row] = await r.db.query<{ chunk_store: string }>(`SELECT chunk_store FROM retrieval_collections WHERE slug = $1`, [slug]);
  lake[slug] = { table: `${LAKE_SCHEMA}."${row!.chunk_store}"`, document: started.body.document_id };
}

const run = (sql: string, extra: Record<string, unknown> = {}) => h.ask(as.engineer, { sql, persist: false, ...extra });

describe('hybrid SQL: semantic_distance over lake collections (Trino, Iceberg, MinIO, Postgres)', () => {
  beforeAll(async () => {
    const env = await lakeEnv();
    ca = env.ca;
    const opened = await openFreshPostgres('hybrid_sql');
    cleanup = opened.cleanup;
    const tokens = await lakeTokens([who.engineer.user, who.admin.user, who.analyst.user]);
    r = await retrievalHarness(opened.db, {
      env: { ...env.env, ...S3, SVC_RAG_LAKE_SCHEMA: LAKE_SCHEMA, SVC_EMBED_DIM: String(DIM), SVC_RAG_IMPORT_FILE_ROWS: '2000' },
      tokens,
    });
    await importInto('orders-lake', who.engineer, [], { source: 'tpch.tiny.orders', text: 'o_comment', key: 'o_orderkey' });
    await importInto('customers-lake', who.engineer, [], { source: 'tpch.tiny.customer', text: 'c_comment', key: 'c_custkey' });
    // a collection only administrators may query
    await importInto('nations-lake', who.admin, ['svc-admin'], { source: 'tpch.tiny.nation', text: 'n_comment', key: 'n_nationkey' });
    h = await exploreHarness(
      { SVC_EMBED_DIM: String(DIM), SVC_PII_BYPASS_ROLES: 'svc-admin', SVC_EXPLORE_FALLBACK_CATALOGS: 'tpch' },
      { engine: await serviceTrinoEngine(ca), tokens, db: opened.db },
    );
  }, 900_000);

  afterAll(async () => {
    if (ca) await dropLakeSchema(LAKE_SCHEMA, ca);
    await h?.close();
    await r?.close();
    await cleanup?.();
  }, 120_000);

  const shapes: { name: string; sql: string; reference: () => Promise<string>; masked?: string[] }[] = [
    {
      name: 'ORDER BY semantic_distance LIMIT k',
      sql: `SELECT o_orderkey, o_comment FROM orders ORDER BY semantic_distance(o_comment, 'delayed shipment'), o_orderkey LIMIT 10`,
      reference: async () => `SELECT o.o_orderkey, o.o_comment FROM tpch.tiny.orders o JOIN ${embeddings('orders-lake')} e
        ON e.import_key = CAST(o.o_orderkey AS varchar)
        ORDER BY cosine_distance(e.embedding, ${await vector('delayed shipment')}), o.o_orderkey LIMIT 10`,
    },
    {
      name: 'WHERE semantic_distance < x, with SELECT *',
      sql: `SELECT * FROM orders WHERE semantic_distance(o_comment, 'final deposits') < 0.6 ORDER BY o_orderkey LIMIT 50`,
      reference:
        async () => `SELECT o.* FROM tpch.tiny.orders o JOIN ${embeddings('orders-lake')} e ON e.import_key = CAST(o.o_orderkey AS varchar)
        WHERE cosine_distance(e.embedding, ${await vector('final deposits')}) < 0.6 ORDER BY o.o_orderkey LIMIT 50`,
    },
    {
      name: 'a year filter, the distance selected',
      sql: `SELECT o_orderkey, o_orderdate, semantic_distance(o_comment, 'delayed shipment') AS distance FROM orders
        WHERE year(o_orderdate) = 1995 ORDER BY distance, o_orderkey LIMIT 10`,
      reference:
        async () => `SELECT o.o_orderkey, o.o_orderdate, cosine_distance(e.embedding, ${await vector('delayed shipment')}) AS distance
        FROM tpch.tiny.orders o JOIN ${embeddings('orders-lake')} e ON e.import_key = CAST(o.o_orderkey AS varchar)
        WHERE year(o.o_orderdate) = 1995 ORDER BY distance, o.o_orderkey LIMIT 10`,
    },
    {
      name: 'a join to customer, ranked by both tables’ embeddings',
      sql: `SELECT o.o_orderkey, c.c_custkey, c.c_mktsegment FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey
        WHERE c.c_mktsegment = 'BUILDING'
        ORDER BY semantic_distance(o.o_comment, 'urgent requests') + semantic_distance(c.c_comment, 'careful accounts'), o.o_orderkey LIMIT 10`,
      reference: async () => `SELECT o.o_orderkey, c.c_custkey, c.c_mktsegment FROM tpch.tiny.orders o
        JOIN tpch.tiny.customer c ON o.o_custkey = c.c_custkey
        JOIN ${embeddings('orders-lake')} eo ON eo.import_key = CAST(o.o_orderkey AS varchar)
        JOIN ${embeddings('customers-lake')} ec ON ec.import_key = CAST(c.c_custkey AS varchar)
        WHERE c.c_mktsegment = 'BUILDING'
        ORDER BY cosine_distance(eo.embedding, ${await vector('urgent requests')}) + cosine_distance(ec.embedding, ${await vector('careful accounts')}), o.o_orderkey LIMIT 10`,
    },
    {
      name: 'GROUP BY over the top k in a subquery',
      sql: `SELECT o_orderpriority, count(*) AS orders FROM
        (SELECT * FROM orders ORDER BY semantic_distance(o_comment, 'special requests'), o_orderkey LIMIT 100) t
        GROUP BY o_orderpriority ORDER BY o_orderpriority`,
      reference: async () => `SELECT o_orderpriority, count(*) AS orders FROM
        (SELECT o.* FROM tpch.tiny.orders o JOIN ${embeddings('orders-lake')} e ON e.import_key = CAST(o.o_orderkey AS varchar)
         ORDER BY cosine_distance(e.embedding, ${await vector('special requests')}), o.o_orderkey LIMIT 100) t
        GROUP BY o_orderpriority ORDER BY o_orderpriority`,
    },
    {
      name: 'a personal column selected beside it is redacted',
      sql: `SELECT c_custkey, c_name, c_mktsegment FROM customer ORDER BY semantic_distance(c_comment, 'regular accounts'), c_custkey LIMIT 8`,
      reference: async () => `SELECT c.c_custkey, c.c_name, c.c_mktsegment FROM tpch.tiny.customer c
        JOIN ${embeddings('customers-lake')} e ON e.import_key = CAST(c.c_custkey AS varchar)
        ORDER BY cosine_distance(e.embedding, ${await vector('regular accounts')}), c.c_custkey LIMIT 8`,
      masked: ['c_name'],
    },
  ];

  it.each(shapes)('$name: the rows equal the join written by hand', async ({ sql, reference, masked }) => {
    const answer = await run(sql);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const expected = await asEve(await reference());
    expect(expected.length).toBeGreaterThan(0);
    const columns = answer.body.columns.map((c: { name: string }) => c.name);
    const redacted = expected.map((row) => row.map((v, i) => (masked?.includes(columns[i]) && v !== null ? '***' : v)));
    expect(answer.body.preview_rows).toEqual(redacted);
    expect(answer.body.masked_columns).toEqual(masked ?? []);
    // the caller reads their own statement; the join with the collection's table is in what was used
    expect(answer.body.sql).toContain('semantic_distance(');
    expect(answer.body.reasoning.tables_used.some((t: string) => t.startsWith(LAKE_SCHEMA))).toBe(true);
  });

  it('answers SELECT * with the columns of the table alone', async () => {
    const answer = await run(`SELECT * FROM orders ORDER BY semantic_distance(o_comment, 'x'), o_orderkey LIMIT 1`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const [table] = await asEve(
      `SELECT count(*) FROM tpch.information_schema.columns WHERE table_schema = 'tiny' AND table_name = 'orders'`,
    );
    expect(answer.body.columns).toHaveLength(Number(table![0]));
  });

  it("the offline planner writes the shape for '… closest to …', and its rows equal the reference", async () => {
    const question = "the 10 orders of 1995 whose comment is closest to 'delayed shipment'";
    const answer = await h.ask(as.engineer, { question, persist: false });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.sql).toContain("semantic_distance(o_comment, 'delayed shipment')");
    // ranked by distance alone: compared with the reference's top 10, whose 10th and 11th distances differ
    const ranked = await asEve(`SELECT o.*, cosine_distance(e.embedding, ${await vector('delayed shipment')}) AS d
      FROM tpch.tiny.orders o JOIN ${embeddings('orders-lake')} e ON e.import_key = CAST(o.o_orderkey AS varchar)
      WHERE extract(year FROM o.o_orderdate) = 1995 ORDER BY d, o.o_orderkey LIMIT 11`);
    expect(ranked[9]!.at(-1)).not.toEqual(ranked[10]!.at(-1));
    const key = (row: unknown[]) => Number(row[0]);
    const sorted = (rows: unknown[][]) => [...rows].sort((a, b) => key(a) - key(b));
    expect(sorted(answer.body.preview_rows)).toEqual(sorted(ranked.slice(0, 10).map((row) => row.slice(0, -1))));
  });

  it.each([
    {
      name: 'semantic_distance over a personal column the caller sees masked',
      sql: `SELECT c_custkey FROM customer ORDER BY semantic_distance(c_name, 'Customer#000000001') LIMIT 5`,
      status: 403,
      detail: 'personal data your role sees masked',
    },
    {
      name: 'a column with no embeddings',
      sql: `SELECT o_orderkey FROM orders ORDER BY semantic_distance(o_clerk, 'clerk') LIMIT 5`,
      status: 422,
      detail: 'tpch.tiny.orders.o_clerk has no embeddings in a lake collection',
    },
    {
      name: 'an unknown column',
      sql: `SELECT o_orderkey FROM orders ORDER BY semantic_distance(o_nothing, 'x') LIMIT 5`,
      status: 422,
      detail: 'needs a column of a table read in the same FROM clause',
    },
    {
      name: 'a collection the caller may not query',
      sql: `SELECT n_name FROM nation ORDER BY semantic_distance(n_comment, 'quiet') LIMIT 3`,
      status: 403,
      detail: 'tpch.tiny.nation.n_comment are in a lake collection you may not query',
    },
    {
      name: 'a phrase that is not a literal',
      sql: `SELECT o_orderkey FROM orders ORDER BY semantic_distance(o_comment, o_clerk) LIMIT 5`,
      status: 422,
      detail: 'must be a quoted phrase',
    },
  ])('refuses $name with a precise $status', async ({ sql, status, detail }) => {
    const answer = await run(sql);
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    expect(answer.body.detail).toContain(detail);
    // the refusal names no collection, and runs nothing
    expect(answer.body.detail).not.toContain('nations-lake');
  });

  it('lets an administrator rank by the collection closed to the engineer', async () => {
    const answer = await h.ask(as.admin, {
      sql: `SELECT n_name FROM nation ORDER BY semantic_distance(n_comment, 'quiet'), n_name LIMIT 3`,
      persist: false,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.preview_rows).toHaveLength(3);
  });

  it('audits the statement as written, with what its rewrite joined', async () => {
    const sql = `SELECT o_orderkey FROM orders ORDER BY semantic_distance(o_comment, 'audit me'), o_orderkey LIMIT 3`;
    expect((await run(sql)).status).toBe(200);
    const [record] = await h.db.query<{ detail: Record<string, unknown> }>(
      `SELECT detail FROM audit_records WHERE service = 'explore' ORDER BY seq DESC LIMIT 1`,
    );
    expect(record!.detail.sql).toContain("semantic_distance(o_comment, 'audit me')");
    expect(record!.detail.sql).not.toContain('cosine_distance');
    expect(record!.detail.semantic_distance).toEqual([
      expect.objectContaining({ table: 'tpch.tiny.orders', column: 'o_comment', phrase: 'audit me', collection: 'orders-lake' }),
    ]);
  });
});

describe('hybrid SQL on the embedded engine', () => {
  it('refuses semantic_distance with a 422 naming the lake', async () => {
    const embedded = await exploreHarness();
    try {
      const answer = await embedded.ask(as.engineer, {
        sql: `SELECT o_orderkey FROM orders ORDER BY semantic_distance(o_comment, 'x') LIMIT 3`,
      });
      expect(answer.status).toBe(422);
      expect(answer.body.detail).toContain('lake collection');
      expect(answer.body.detail).toContain('embedded engine');
    } finally {
      await embedded.close();
    }
  });
});
