import { describe, expect, it } from 'vitest';
import { tableReferences, tablesOf, validateStatement } from '../../src/explore/sql/index.ts';

// The base tables a statement reads (each is checked by the policy): qualified with the defaults, CTE names left
// out only where the CTE is visible.
const defaults = { catalog: 'tpch', schema: 'tiny' };
const statementOf = (sql: string) => {
  const v = validateStatement(sql);
  if (!v.ok) throw new Error(v.reason);
  return v.statement;
};

describe('tablesOf', () => {
  it.each<[string, string[]]>([
    ['SELECT 1', []],
    ['SELECT * FROM customer', ['tpch.tiny.customer']],
    ['SELECT * FROM sf1.customer', ['tpch.sf1.customer']],
    ['SELECT * FROM hive.web.clicks', ['hive.web.clicks']],
    ['SELECT * FROM "TPCH"."Tiny"."Customer"', ['tpch.tiny.customer']],
    ['SELECT * FROM CUSTOMER c JOIN tpch.tiny.customer d ON true', ['tpch.tiny.customer']],
    ['SELECT * FROM customer JOIN orders ON c_custkey = o_custkey, nation', ['tpch.tiny.customer', 'tpch.tiny.nation', 'tpch.tiny.orders']],
    ['SELECT (SELECT max(s_phone) FROM supplier) FROM nation', ['tpch.tiny.nation', 'tpch.tiny.supplier']],
    ['SELECT * FROM nation WHERE n_regionkey IN (SELECT r_regionkey FROM region)', ['tpch.tiny.nation', 'tpch.tiny.region']],
    [
      'SELECT * FROM nation WHERE EXISTS (SELECT 1 FROM supplier WHERE s_nationkey = n_nationkey)',
      ['tpch.tiny.nation', 'tpch.tiny.supplier'],
    ],
    ['WITH x AS (SELECT * FROM customer) SELECT * FROM x', ['tpch.tiny.customer']],
    ['WITH x AS (SELECT * FROM customer), y AS (SELECT * FROM x) SELECT * FROM y, orders', ['tpch.tiny.customer', 'tpch.tiny.orders']],
    // a CTE named like a table reads the table inside its own definition
    ['WITH customer AS (SELECT * FROM customer WHERE c_acctbal > 0) SELECT * FROM customer', ['tpch.tiny.customer']],
    // ... and a later CTE is not visible to an earlier one
    ['WITH a AS (SELECT * FROM b), b AS (SELECT * FROM nation) SELECT * FROM a', ['tpch.tiny.b', 'tpch.tiny.nation']],
    // a CTE is visible only inside the query that defines it
    ['SELECT * FROM (WITH x AS (SELECT * FROM nation) SELECT * FROM x) t, x', ['tpch.tiny.nation', 'tpch.tiny.x']],
    // a qualified name is never a CTE
    ['WITH customer AS (SELECT 1 AS a) SELECT * FROM customer, tiny.customer', ['tpch.tiny.customer']],
    ['WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) SELECT * FROM t', []],
    ['TABLE region', ['tpch.tiny.region']],
    ['SELECT * FROM customer UNION SELECT * FROM supplier', ['tpch.tiny.customer', 'tpch.tiny.supplier']],
    [
      'SELECT * FROM customer c, LATERAL (SELECT * FROM orders o WHERE o.o_custkey = c.c_custkey) AS l',
      ['tpch.tiny.customer', 'tpch.tiny.orders'],
    ],
  ])('%j reads %j', (sql, tables) => {
    expect(tablesOf(statementOf(sql), defaults)).toEqual(tables);
  });

  it('keeps each reference as written beside its qualified name', () => {
    expect(
      tableReferences(statementOf('SELECT * FROM customer c JOIN "SF1".Orders o ON true JOIN hive.web.clicks k ON true'), defaults),
    ).toEqual([
      { written: 'customer', table: 'tpch.tiny.customer' },
      { written: '"sf1".orders', table: 'tpch.sf1.orders' },
      { written: 'hive.web.clicks', table: 'hive.web.clicks' },
    ]);
  });
});
