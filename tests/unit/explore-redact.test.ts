import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogTags, piiColumns, readCatalog } from '../../src/explore/catalog.ts';
import { createEmbeddedEngine } from '../../src/explore/engines/embedded.ts';
import type { QueryEngine } from '../../src/explore/engines/types.ts';
import { redactRows } from '../../src/explore/redact.ts';
import { outputLineage, validateStatement, type TableColumns } from '../../src/explore/sql/index.ts';

// No value of a personal-data column reaches a non-bypass caller, whatever the query's shape: every statement runs
// on the sample, is redacted, and no personal value of the sample may remain in any cell.
const SHAPES = [
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

describe('redaction', () => {
  let engine: QueryEngine;
  let schema: TableColumns;
  let pii: Set<string>;
  let personal: Set<unknown>;

  beforeAll(async () => {
    engine = await createEmbeddedEngine();
    const entries = await readCatalog(engine, ['tpch'], await loadCatalogTags());
    schema = Object.fromEntries(entries.map((e) => [e.fqn, e.columns.map((c) => c.name)]));
    pii = piiColumns(entries);
    personal = new Set();
    for (const [table, cols] of [['customer', 'c_name, c_address, c_phone'], ['supplier', 's_name, s_address, s_phone']]) {
      const r = await engine.execute(`SELECT ${cols} FROM tpch.tiny.${table}`, { user: 't' }, { timeoutMs: 10_000 });
      for (const row of r.rows) for (const v of row) personal.add(v);
    }
  }, 60_000);
  afterAll(() => engine.close());

  const run = async (sql: string) => {
    const embedded = sql.replace(/array_join\(array_agg\((\w+)\), ','\)/, "string_agg($1, ',')");
    return engine.execute(embedded, { user: 't' }, { timeoutMs: 10_000 });
  };
  const redact = (sql: string, result: { columns: { name: string }[]; rows: unknown[][] }) => {
    const v = validateStatement(sql);
    if (!v.ok) throw new Error(v.reason);
    return redactRows(result.columns, result.rows, outputLineage(v.statement, schema, { catalog: 'tpch', schema: 'tiny' }), pii, '***');
  };
  const leaks = (rows: unknown[][]) =>
    rows.flat().filter((v) => personal.has(v) || (typeof v === 'string' && [...personal].some((p) => typeof p === 'string' && v.toUpperCase().includes((p as string).toUpperCase()))));

  it.each(SHAPES)('leaves no personal value in %s', async (sql) => {
    const result = await run(sql);
    const { rows } = result;
    expect(rows.length).toBeGreaterThan(0);
    expect(leaks([...rows.slice(0, 20), ...rows.slice(-20)]).length, 'the raw result holds personal values').toBeGreaterThan(0);
    const { rows: redacted, maskedColumns } = redact(sql, result);
    expect(maskedColumns.length).toBeGreaterThan(0);
    expect(leaks(redacted)).toEqual([]);
  });

  it('keeps values that do not derive from personal data', async () => {
    const sql = 'SELECT n_name, count(*) AS customers FROM tpch.tiny.customer JOIN tpch.tiny.nation ON c_nationkey = n_nationkey GROUP BY n_name';
    const result = await run(sql);
    expect(redact(sql, result)).toEqual({ rows: result.rows, maskedColumns: [] });
  });

  it('masks columns it cannot trace', () => {
    const out = redactRows(['a', 'b'], [[1, 'x']], [{ name: 'a', sources: [], unknown: false }], pii, '***');
    expect(out).toEqual({ rows: [['***', '***']], maskedColumns: ['a', 'b'] });
  });
});
