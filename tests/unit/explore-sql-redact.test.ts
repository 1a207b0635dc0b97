import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogTags } from '../../src/platform/catalog-tags.ts';
import { piiColumns, readCatalog } from '../../src/explore/catalog.ts';
import { createEmbeddedEngine } from '../../src/explore/engines/embedded.ts';
import type { QueryEngine } from '../../src/explore/engines/types.ts';
import { redactRows } from '../../src/explore/redact.ts';
import { outputLineage, validateStatement, type ColumnLineage, type TableColumns } from '../../src/explore/sql/index.ts';
import { SAMPLE_TABLES } from '../support/explore.ts';

// Redaction by lineage. The unit cases pin the rules; the taint check runs each query shape for real (PGlite,
// whose SQL these shapes share with Trino) on data whose every personal value is a marker `PII-<column>-<n>`, and
// requires that no marker survives redaction in any cell: a source the lineage missed would show up here. A second
// check runs fully qualified shapes on the embedded engine's sample with the personal-data columns the catalog's
// tags name, so the tags and the redaction are held together.

const pii = new Set([
  'tpch.tiny.customer.c_name',
  'tpch.tiny.customer.c_address',
  'tpch.tiny.customer.c_phone',
  'tpch.tiny.supplier.s_name',
  'tpch.tiny.supplier.s_address',
  'tpch.tiny.supplier.s_phone',
]);
const col = (name: string, sources: string[], unknown = false): ColumnLineage => ({
  name,
  sources: sources.map((s) => ({ table: s.split('.').slice(0, 3).join('.'), column: s.split('.')[3]! })),
  unknown,
});

describe('redactRows', () => {
  const rows = [
    [1, 'Alice', '555-0100', null],
    [2, 'Bob', null, 'x'],
  ];
  const columns = ['id', 'name', 'phone', 'note'];

  it('masks every value of a column derived from a personal-data column, keeping null', () => {
    const lineage = [
      col('id', ['tpch.tiny.customer.c_custkey']),
      col('name', ['tpch.tiny.customer.c_name']),
      col('phone', ['tpch.tiny.customer.c_acctbal', 'tpch.tiny.customer.c_phone']),
      col('note', []),
    ];
    expect(redactRows(columns, rows, lineage, pii, '***')).toEqual({
      rows: [
        [1, '***', '***', null],
        [2, '***', null, 'x'],
      ],
      maskedColumns: ['name', 'phone'],
    });
  });

  it('masks a column whose origin is unknown', () => {
    const lineage = [col('id', []), col('name', [], true), col('phone', []), col('note', [])];
    expect(redactRows(columns, rows, lineage, pii, '[hidden]')).toEqual({
      rows: [
        [1, '[hidden]', '555-0100', null],
        [2, '[hidden]', null, 'x'],
      ],
      maskedColumns: ['name'],
    });
  });

  it('masks every column when the lineage and the result disagree on the number of columns', () => {
    const lineage = [col('id', []), col('name', [])];
    const out = redactRows(columns, rows, lineage, pii, '***');
    expect(out.maskedColumns).toEqual(columns);
    expect(out.rows).toEqual([
      ['***', '***', '***', null],
      ['***', '***', null, '***'],
    ]);
  });

  it('masks every column when the lineage covers fewer columns than the result', () => {
    const out = redactRows(['a', 'b'], [[1, 'x']], [col('a', [])], pii, '***');
    expect(out).toEqual({ rows: [['***', '***']], maskedColumns: ['a', 'b'] });
  });

  it('masks cells beyond the declared columns', () => {
    const out = redactRows(['a'], [[1, 'extra']], [col('a', [])], pii, '***');
    expect(out.rows).toEqual([[1, '***']]);
  });

  it('names masked columns as the engine named them and leaves the input alone', () => {
    const input = [[1, 'Alice']];
    const out = redactRows([{ name: 'n' }, { name: 'Who' }], input, [col('n', []), col('who', ['tpch.tiny.customer.c_name'])], pii, '***');
    expect(out).toEqual({ rows: [[1, '***']], maskedColumns: ['Who'] });
    expect(input).toEqual([[1, 'Alice']]);
  });

  it('matches personal-data columns case-insensitively', () => {
    const out = redactRows(['p'], [['555']], [col('p', ['tpch.tiny.customer.c_phone'])], new Set(['TPCH.TINY.CUSTOMER.C_PHONE']), '***');
    expect(out.rows).toEqual([['***']]);
  });

  it('keeps everything when nothing derives from personal data', () => {
    const out = redactRows(['n'], [[3]], [col('n', ['tpch.tiny.nation.n_name'])], pii, '***');
    expect(out).toEqual({ rows: [[3]], maskedColumns: [] });
  });
});

const SHAPES = [
  'SELECT c_name, c_acctbal FROM customer',
  'SELECT c.c_phone AS contact FROM tiny.customer c',
  'SELECT upper(c_name) FROM customer',
  "SELECT concat(c_name, 'x') FROM customer",
  "SELECT c_name || ' / ' || c_address AS label FROM customer",
  "SELECT CASE WHEN c_acctbal > 0 THEN c_phone ELSE 'none' END FROM customer",
  'SELECT coalesce(NULL, c_address) FROM customer',
  'SELECT lower(substr(c_phone, 1, 15)) FROM customer',
  'SELECT CAST(c_phone AS varchar) FROM customer',
  'SELECT ROW(c_name, 1) FROM customer',
  'SELECT ARRAY[CAST(c_custkey AS varchar), c_phone] FROM customer',
  'SELECT * FROM customer',
  'SELECT c.* FROM customer c',
  'SELECT *, c_name AS again FROM customer',
  'TABLE customer',
  'SELECT t.* FROM (SELECT c_address FROM customer) t',
  'SELECT x FROM (SELECT c_phone AS x FROM customer) AS s',
  'SELECT v.x FROM (SELECT c_phone FROM customer) AS v (x)',
  'SELECT * FROM (SELECT c_phone AS n_name FROM customer) nation',
  'WITH x AS (SELECT c_phone p FROM customer) SELECT p FROM x',
  'WITH a AS (SELECT c_name AS n FROM customer), b AS (SELECT n AS m FROM a) SELECT m FROM b',
  'WITH customer AS (SELECT c_name FROM customer WHERE c_acctbal > 0) SELECT * FROM customer',
  'WITH nation AS (SELECT c_address AS n_name FROM customer) SELECT n_name FROM nation',
  "WITH RECURSIVE t(n, p) AS (SELECT 1, c_phone FROM customer UNION ALL SELECT n + 1, p || '!' FROM t WHERE n < 3) SELECT n, p FROM t",
  'SELECT c_name FROM customer UNION SELECT n_name FROM nation',
  'SELECT n_name FROM nation UNION ALL SELECT s_name FROM supplier',
  'SELECT n_name FROM nation UNION ALL SELECT c_phone FROM customer ORDER BY 1',
  'SELECT c_name FROM customer INTERSECT SELECT c_name FROM customer',
  'SELECT c_address FROM customer EXCEPT SELECT n_name FROM nation',
  'SELECT n.n_name, max(c.c_phone) FROM customer c JOIN nation n ON c.c_nationkey = n.n_nationkey GROUP BY n.n_name',
  'SELECT o.o_orderkey, c.c_name FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey',
  'SELECT s_address FROM supplier, nation WHERE s_nationkey = n_nationkey',
  'SELECT coalesce(c_name, s_name) FROM customer, supplier',
  'SELECT * FROM customer JOIN supplier ON c_nationkey = s_nationkey',
  'SELECT * FROM (SELECT c_nationkey AS k, c_phone FROM customer) a JOIN (SELECT s_nationkey AS k, s_name FROM supplier) b USING (k)',
  'SELECT * FROM (SELECT c_nationkey AS k, c_phone FROM customer) a NATURAL JOIN (SELECT n_nationkey AS k, n_name FROM nation) b',
  'SELECT k FROM (SELECT c_phone AS k FROM customer) a JOIN (SELECT c_phone AS k FROM customer) b USING (k)',
  'SELECT (SELECT max(c_phone) FROM customer) AS x',
  'SELECT n_name, (SELECT max(c_phone) FROM customer WHERE c_nationkey = n_nationkey) FROM nation',
  'SELECT (SELECT c.c_address) FROM customer c',
  'SELECT array_agg(c_name) FROM customer',
  'SELECT max(c_name) FILTER (WHERE c_acctbal > 0) FROM customer',
  'SELECT c_mktsegment, min(c_phone) FROM customer GROUP BY ROLLUP (c_mktsegment)',
  'SELECT lag(c_phone) OVER (ORDER BY c_custkey) FROM customer',
  'SELECT first_value(c_name) OVER (PARTITION BY c_nationkey ORDER BY c_custkey) FROM customer',
  'SELECT l.p FROM customer c CROSS JOIN LATERAL (SELECT upper(c.c_phone) AS p) l',
  'SELECT u.v FROM customer, UNNEST(ARRAY[c_address]) AS u(v)',
  'SELECT * FROM customer c, LATERAL (SELECT c.c_name AS again) AS l',
  "SELECT * FROM (VALUES ('a')) AS t (x) CROSS JOIN (SELECT s_phone FROM supplier) s",
  "SELECT c_name FROM customer UNION ALL VALUES ('x')",
  'SELECT c_phone FROM customer ORDER BY c_custkey FETCH FIRST 2 ROWS ONLY',
  'SELECT (SELECT (SELECT max(s_phone) FROM supplier WHERE s_nationkey = n.n_nationkey)) FROM nation n',
];

describe('no personal value survives redaction, whatever the shape (taint check on PGlite)', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create();
    await db.exec(`
      CREATE SCHEMA tiny; SET search_path TO tiny;
      CREATE TABLE nation (n_nationkey int, n_name text, n_regionkey int, n_comment text);
      CREATE TABLE customer (c_custkey int, c_name text, c_address text, c_nationkey int, c_phone text, c_acctbal numeric, c_mktsegment text, c_comment text);
      CREATE TABLE supplier (s_suppkey int, s_name text, s_address text, s_nationkey int, s_phone text, s_acctbal numeric, s_comment text);
      CREATE TABLE orders (o_orderkey int, o_custkey int, o_totalprice numeric, o_comment text);
      INSERT INTO nation SELECT n, 'NATION' || n, n % 2, 'comment' FROM generate_series(0, 2) n;
      INSERT INTO customer SELECT n, 'PII-c_name-' || n, 'PII-c_address-' || n, n % 3, 'PII-c_phone-' || n, n * 10 - 25, 'SEG' || n % 2, 'note' FROM generate_series(1, 6) n;
      INSERT INTO supplier SELECT n, 'PII-s_name-' || n, 'PII-s_address-' || n, n % 3, 'PII-s_phone-' || n, n, 'note' FROM generate_series(1, 3) n;
      INSERT INTO orders SELECT n, n % 6 + 1, n * 100, 'order' FROM generate_series(1, 8) n;
    `);
  }, 60_000);
  afterAll(() => db.close());

  const schema = {
    'tpch.tiny.nation': ['n_nationkey', 'n_name', 'n_regionkey', 'n_comment'],
    'tpch.tiny.customer': ['c_custkey', 'c_name', 'c_address', 'c_nationkey', 'c_phone', 'c_acctbal', 'c_mktsegment', 'c_comment'],
    'tpch.tiny.supplier': ['s_suppkey', 's_name', 's_address', 's_nationkey', 's_phone', 's_acctbal', 's_comment'],
    'tpch.tiny.orders': ['o_orderkey', 'o_custkey', 'o_totalprice', 'o_comment'],
  };
  const tainted = (rows: unknown[][]) => rows.flat().filter((v) => /pii-/i.test(JSON.stringify(v ?? null)));

  it.each(SHAPES)('%s', async (sql) => {
    const v = validateStatement(sql);
    if (!v.ok) throw new Error(v.reason);
    const result = await db.query<unknown[]>(sql, [], { rowMode: 'array' });
    const columns = result.fields.map((f) => f.name);
    expect(tainted(result.rows).length, 'the raw result carries personal values').toBeGreaterThan(0);
    const lineage = outputLineage(v.statement, schema, { catalog: 'tpch', schema: 'tiny' });
    expect(lineage.length, 'one lineage entry per result column').toBe(columns.length);
    const out = redactRows(columns, result.rows, lineage, pii, '***');
    expect(tainted(out.rows)).toEqual([]);
  });

  it('keeps values that do not derive from personal data', async () => {
    const sql =
      'SELECT n_name, count(*) AS customers, sum(c_acctbal) FROM customer JOIN nation ON c_nationkey = n_nationkey GROUP BY n_name';
    const v = validateStatement(sql);
    if (!v.ok) throw new Error(v.reason);
    const result = await db.query<unknown[]>(sql, [], { rowMode: 'array' });
    const lineage = outputLineage(v.statement, schema, { catalog: 'tpch', schema: 'tiny' });
    expect(
      redactRows(
        result.fields.map((f) => f.name),
        result.rows,
        lineage,
        pii,
        '***',
      ),
    ).toEqual({ rows: result.rows, maskedColumns: [] });
  });
});

const QUALIFIED_SHAPES = [
  'SELECT c_name, c_acctbal FROM tpch.tiny.customer',
  'SELECT c.c_phone AS contact FROM tpch.tiny.customer c',
  'SELECT upper(c_name) FROM tpch.tiny.customer',
  "SELECT concat(c_name, ' ', c_address) AS label FROM tpch.tiny.customer",
  "SELECT CASE WHEN c_acctbal > 0 THEN c_phone ELSE 'none' END FROM tpch.tiny.customer",
  'SELECT * FROM tpch.tiny.customer',
  'SELECT c.* FROM tpch.tiny.customer c',
  'SELECT t.* FROM (SELECT c_address FROM tpch.tiny.customer) t',
  'SELECT x FROM (SELECT c_phone AS x FROM tpch.tiny.customer) AS s',
  'WITH a AS (SELECT c_name AS n FROM tpch.tiny.customer), b AS (SELECT n AS m FROM a) SELECT m FROM b',
  'SELECT n_name FROM tpch.tiny.nation UNION ALL SELECT s_name FROM tpch.tiny.supplier',
  'SELECT c_name FROM tpch.tiny.customer INTERSECT SELECT c_name FROM tpch.tiny.customer',
  'SELECT n.n_name, max(c.c_phone) FROM tpch.tiny.customer c JOIN tpch.tiny.nation n ON c.c_nationkey = n.n_nationkey GROUP BY n.n_name',
  'SELECT (SELECT max(s_phone) FROM tpch.tiny.supplier) AS p',
  'SELECT o.o_orderkey, c.c_name FROM tpch.tiny.orders o JOIN tpch.tiny.customer c ON o.o_custkey = c.c_custkey',
  'SELECT s_address FROM tpch.tiny.supplier, tpch.tiny.nation WHERE s_nationkey = n_nationkey',
  'SELECT lower(substr(c_phone, 1, 15)) FROM tpch.tiny.customer',
  'SELECT coalesce(c_name, s_name) FROM tpch.tiny.customer, tpch.tiny.supplier LIMIT 50',
  "SELECT array_join(array_agg(c_name), ',') FROM tpch.tiny.customer",
];

describe("no personal value survives redaction by the catalog's tags (embedded engine's sample)", () => {
  let engine: QueryEngine;
  let catalogSchema: TableColumns;
  let catalogPii: Set<string>;
  let personal: Set<unknown>;

  beforeAll(async () => {
    engine = await createEmbeddedEngine();
    const entries = await readCatalog(engine, ['tpch'], await loadCatalogTags());
    catalogSchema = Object.fromEntries(entries.map((e) => [e.fqn, e.columns.map((c) => c.name)]));
    catalogPii = piiColumns(entries);
    personal = new Set();
    for (const [table, cols] of [
      ['customer', 'c_name, c_address, c_phone'],
      ['supplier', 's_name, s_address, s_phone'],
    ]) {
      const r = await engine.execute(`SELECT ${cols} FROM tpch.tiny.${table}`, { user: 't' }, { timeoutMs: 10_000, reads: SAMPLE_TABLES });
      for (const row of r.rows) for (const v of row) personal.add(v);
    }
  }, 60_000);
  afterAll(() => engine.close());

  // the sample is PGlite, which has string_agg where Trino has array_join(array_agg(...))
  const run = async (sql: string) => {
    const embedded = sql.replace(/array_join\(array_agg\((\w+)\), ','\)/, "string_agg($1, ',')");
    return engine.execute(embedded, { user: 't' }, { timeoutMs: 10_000, reads: SAMPLE_TABLES });
  };
  const redact = (sql: string, result: { columns: { name: string }[]; rows: unknown[][] }) => {
    const v = validateStatement(sql);
    if (!v.ok) throw new Error(v.reason);
    return redactRows(
      result.columns,
      result.rows,
      outputLineage(v.statement, catalogSchema, { catalog: 'tpch', schema: 'tiny' }),
      catalogPii,
      '***',
    );
  };
  const leaks = (rows: unknown[][]) =>
    rows
      .flat()
      .filter(
        (v) =>
          personal.has(v) ||
          (typeof v === 'string' &&
            [...personal].some((p) => typeof p === 'string' && v.toUpperCase().includes((p as string).toUpperCase()))),
      );

  it.each(QUALIFIED_SHAPES)('leaves no personal value in %s', async (sql) => {
    const result = await run(sql);
    const { rows } = result;
    expect(rows.length).toBeGreaterThan(0);
    expect(leaks([...rows.slice(0, 20), ...rows.slice(-20)]).length, 'the raw result holds personal values').toBeGreaterThan(0);
    const { rows: redacted, maskedColumns } = redact(sql, result);
    expect(maskedColumns.length).toBeGreaterThan(0);
    expect(leaks(redacted)).toEqual([]);
  });

  it('keeps values that do not derive from personal data', async () => {
    const sql =
      'SELECT n_name, count(*) AS customers FROM tpch.tiny.customer JOIN tpch.tiny.nation ON c_nationkey = n_nationkey GROUP BY n_name';
    const result = await run(sql);
    expect(redact(sql, result)).toEqual({ rows: result.rows, maskedColumns: [] });
  });
});
