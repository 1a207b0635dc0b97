import { describe, expect, it } from 'vitest';
import { outputLineage as lineageOf, validateStatement, type TableColumns } from '../../src/explore/sql/index.ts';

// Which base columns each output column comes from: the basis of redaction, so every query shape is covered.
const schema = {
  'tpch.tiny.customer': ['c_custkey', 'c_name', 'c_address', 'c_nationkey', 'c_phone', 'c_acctbal', 'c_mktsegment', 'c_comment'],
  'tpch.tiny.orders': ['o_orderkey', 'o_custkey', 'o_orderstatus', 'o_totalprice', 'o_orderdate', 'o_comment'],
  'tpch.tiny.nation': ['n_nationkey', 'n_name', 'n_regionkey', 'n_comment'],
  'tpch.tiny.supplier': ['s_suppkey', 's_name', 's_address', 's_nationkey', 's_phone', 's_acctbal', 's_comment'],
};
const defaults = { catalog: 'tpch', schema: 'tiny' };
const C = (c: string) => `tpch.tiny.customer.${c}`;
const N = (c: string) => `tpch.tiny.nation.${c}`;
const S = (c: string) => `tpch.tiny.supplier.${c}`;

// Sources as `catalog.schema.table.column` strings, which keeps the expected tables short.
function outputLineage(sql: string, tables: TableColumns, d: typeof defaults) {
  const v = validateStatement(sql);
  if (!v.ok) throw new Error(v.reason);
  return lineageOf(v.statement, tables, d).map((c) => ({ ...c, sources: c.sources.map((s) => `${s.table}.${s.column}`) }));
}
const lineage = (sql: string) => outputLineage(sql, schema, defaults).map((o) => [o.name, o.sources, o.unknown]);

describe('output lineage', () => {
  it.each<[string, [string, string[], boolean][]]>([
    ['SELECT c_name FROM customer', [['c_name', [C('c_name')], false]]],
    ['SELECT c.c_name AS who FROM tpch.tiny.customer c', [['who', [C('c_name')], false]]],
    ['SELECT upper(c.c_name) AS who FROM tpch.tiny.customer c', [['who', [C('c_name')], false]]],
    ["SELECT concat(c_name, ' / ', c_phone) FROM customer", [['_col0', [C('c_name'), C('c_phone')], false]]],
    ["SELECT CASE WHEN c_acctbal > 0 THEN c_phone ELSE 'none' END AS p FROM customer", [['p', [C('c_acctbal'), C('c_phone')], false]]],
    ['SELECT count(*) AS n FROM customer', [['n', [], false]]],
    ['SELECT max(c_phone) m, count(c_name) k FROM customer', [['m', [C('c_phone')], false], ['k', [C('c_name')], false]]],
    [
      'SELECT n_name, count(*) FROM customer JOIN nation ON c_nationkey = n_nationkey GROUP BY n_name',
      [['n_name', [N('n_name')], false], ['_col1', [], false]],
    ],
    ['WITH x AS (SELECT c_phone p FROM customer) SELECT p FROM x', [['p', [C('c_phone')], false]]],
    ['WITH x AS (SELECT c_phone p FROM customer), y AS (SELECT p AS q FROM x) SELECT q FROM y', [['q', [C('c_phone')], false]]],
    ['WITH x (a) AS (SELECT c_address FROM customer) SELECT a FROM x', [['a', [C('c_address')], false]]],
    ['SELECT c_name FROM customer UNION SELECT n_name FROM nation', [['c_name', [C('c_name'), N('n_name')], false]]],
    ['SELECT n_name FROM nation UNION ALL SELECT s_name FROM supplier', [['n_name', [N('n_name'), S('s_name')], false]]],
    ['SELECT (SELECT max(c_phone) FROM customer) AS x', [['x', [C('c_phone')], false]]],
    ['SELECT t.* FROM (SELECT c_address FROM customer) t', [['c_address', [C('c_address')], false]]],
    ['SELECT t.a FROM (SELECT c_address AS a FROM customer) AS t', [['a', [C('c_address')], false]]],
    ['SELECT v.x FROM (SELECT c_phone FROM customer) AS v (x)', [['x', [C('c_phone')], false]]],
    ['SELECT n.* FROM nation n', schema['tpch.tiny.nation'].map((c) => [c, [N(c)], false] as [string, string[], boolean])],
    ['SELECT * FROM nation', schema['tpch.tiny.nation'].map((c) => [c, [N(c)], false] as [string, string[], boolean])],
    ['SELECT "C_PHONE" FROM customer', [['c_phone', [C('c_phone')], false]]],
    ['SELECT c_nationkey FROM customer JOIN supplier ON c_nationkey = s_nationkey', [['c_nationkey', [C('c_nationkey')], false]]],
    ['SELECT n_comment FROM nation, customer', [['n_comment', [N('n_comment')], false]]],
    ['VALUES 1', [['_col0', [], false]]],
    ['SELECT 1 AS one', [['one', [], false]]],
  ])('%s', (sql, expected) => {
    expect(lineage(sql)).toEqual(expected);
  });

  it('counts a name two joined tables share as coming from both', () => {
    const shared = { 'tpch.tiny.a': ['id', 'secret'], 'tpch.tiny.b': ['id', 'secret'] };
    const out = outputLineage('SELECT secret FROM a JOIN b USING (id)', shared, defaults);
    expect(out[0]!.sources).toEqual(['tpch.tiny.a.secret', 'tpch.tiny.b.secret']);
  });

  it('marks what it cannot trace as unknown', () => {
    expect(outputLineage('SELECT nope FROM customer', schema, defaults)[0]!.unknown).toBe(true);
    expect(outputLineage('SELECT * FROM other.place.table_x', schema, defaults)[0]!.unknown).toBe(true);
  });

  it('traces a correlated subquery to the outer table', () => {
    const out = outputLineage('SELECT (SELECT count(*) FROM orders o WHERE o.o_custkey = c.c_custkey) AS n, c.c_phone FROM customer c', schema, defaults);
    expect(out.map((o) => [o.name, o.sources])).toEqual([['n', []], ['c_phone', [C('c_phone')]]]);
  });

  it('follows columns of tables the schema does not list by their names', () => {
    const out = outputLineage('SELECT x.col1 FROM hive.db.unknown_table x', schema, defaults);
    expect(out[0]).toEqual({ name: 'col1', sources: ['hive.db.unknown_table.col1'], unknown: false });
  });
});
