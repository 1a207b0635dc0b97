import { describe, expect, it } from 'vitest';
import { ensureLimit, validateStatement } from '../../src/explore/sql/index.ts';

// Step 5: one read statement in Trino's dialect, decided by the grammar, then the keyword denylist.
describe('validateStatement', () => {
  it.each([
    ['INSERT INTO tpch.tiny.nation SELECT * FROM tpch.tiny.nation', /read queries/],
    ['insert into t values (1)', /read queries/],
    ['UPDATE t SET a = 1', /read queries/],
    ['DELETE FROM t', /read queries/],
    ['MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE', /read queries/],
    ['CREATE TABLE x AS SELECT * FROM t', /read queries/],
    ['DROP TABLE t', /read queries/],
    ['ALTER TABLE t RENAME TO u', /read queries/],
    ['TRUNCATE TABLE t', /read queries/],
    ['GRANT SELECT ON t TO ROLE r', /read queries/],
    ['CALL system.sync_partition_metadata()', /read queries/],
    ['SET SESSION query_max_run_time = \'1h\'', /read queries/],
    ['RESET SESSION a', /read queries/],
    ['USE tpch.tiny', /read queries/],
    ['EXPLAIN ANALYZE SELECT * FROM t', /read queries/],
    ['EXPLAIN SELECT 1', /read queries/],
    ['SHOW TABLES', /read queries/],
    ['PREPARE p FROM SELECT 1', /read queries/],
    ['EXECUTE p', /read queries/],
    ['START TRANSACTION', /read queries/],
    ['COMMIT', /read queries/],
    ['SELECT 1; DROP TABLE t', /one statement/],
    ['SELECT 1; SELECT 2', /one statement/],
    ["SELECT * FROM TABLE(postgresql.system.query(query => 'DELETE FROM accounts'))", /Table functions/],
    ["SELECT * FROM TABLE(system.query(query => 'select 1'))", /Table functions/],
    ['SELEC * FROM t', /does not parse/],
    ['', /empty/],
    ['   ;  ', /empty/],
  ])('refuses %j', (sql, reason) => {
    const result = validateStatement(sql);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it.each([
    'SELECT 1',
    'select n_name from tpch.tiny.nation;',
    "SELECT updated_at, \"delete\", \"drop\" FROM t WHERE note = 'drop table users; delete from x'",
    'SELECT comment, start, "insert" FROM t',
    'WITH x AS (SELECT c_name FROM tpch.tiny.customer) SELECT * FROM x',
    'SELECT 1 UNION ALL SELECT 2',
    'SELECT a FROM t EXCEPT SELECT a FROM u',
    'SELECT a FROM t INTERSECT SELECT a FROM u',
    '(SELECT 1)',
    'VALUES (1, 2)',
    'SELECT x FROM UNNEST(ARRAY[1, 2]) AS t(x)',
    "SELECT count(*) FROM tpch.tiny.orders WHERE o_comment LIKE '%update%' -- update later",
    'SELECT n_name AS "set", count(*) FROM tpch.tiny.nation GROUP BY 1',
  ])('accepts %j', (sql) => {
    const result = validateStatement(sql);
    expect(result).toMatchObject({ ok: true });
  });
});

describe('ensureLimit', () => {
  const limited = (sql: string) => {
    const v = validateStatement(sql);
    if (!v.ok) throw new Error(v.reason);
    return ensureLimit(v.statement.sql, v.statement, 10000);
  };

  it.each([
    ['SELECT 1', 'SELECT 1\nLIMIT 10000'],
    ['SELECT 1;', 'SELECT 1\nLIMIT 10000'],
    ['SELECT a FROM t LIMIT 5', 'SELECT a FROM t LIMIT 5'],
    ['SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY', 'SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY'],
    ['SELECT * FROM (SELECT a FROM t LIMIT 5) s', 'SELECT * FROM (SELECT a FROM t LIMIT 5) s\nLIMIT 10000'],
    ['WITH x AS (SELECT a FROM t LIMIT 2) SELECT * FROM x', 'WITH x AS (SELECT a FROM t LIMIT 2) SELECT * FROM x\nLIMIT 10000'],
    ['WITH x AS (SELECT a FROM t) SELECT * FROM x LIMIT 7', 'WITH x AS (SELECT a FROM t) SELECT * FROM x LIMIT 7'],
    ['SELECT 1 UNION SELECT 2', 'SELECT 1 UNION SELECT 2\nLIMIT 10000'],
    ["SELECT 'LIMIT 5' AS x", "SELECT 'LIMIT 5' AS x\nLIMIT 10000"],
    ['SELECT a FROM t -- no limit here', 'SELECT a FROM t\nLIMIT 10000'],
  ])('%j becomes %j', (sql, expected) => {
    expect(limited(sql)).toBe(expected);
  });
});
