import { describe, expect, it } from 'vitest';
import { validateStatement } from '../../src/explore/sql/index.ts';
import { parseTrino } from '../../src/explore/sql/parse.ts';
import { refusalOf } from '../../src/explore/sql/refusals.ts';

// Step 5: exactly one read query in Trino's dialect, decided by the grammar; then the keyword denylist over the
// parse tree's tokens, the table-function ban and Trino's identifier rules. Writes in every disguise are refused,
// harmless queries that merely contain such words are accepted.

const reasonOf = (sql: string) => {
  const v = validateStatement(sql);
  return v.ok ? undefined : v.reason;
};

describe('validateStatement refuses', () => {
  describe.each<[string, RegExp, string[]]>([
    [
      'writes and other statements that are not queries',
      /^Only read queries \(SELECT, WITH, VALUES, UNION, EXCEPT, INTERSECT\) are allowed; this is an? [A-Z ]+ statement\.$/,
      [
        'INSERT INTO tpch.tiny.nation SELECT * FROM tpch.tiny.nation',
        'insert into t values (1)',
        'InSeRt InTo t (a) VALUES (1)',
        'UPDATE t SET a = 1',
        'DELETE FROM t',
        'delete from t where true',
        'MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE',
        'CREATE TABLE x AS SELECT * FROM t',
        'CREATE TABLE x (a bigint)',
        'CREATE VIEW v AS SELECT 1',
        'CREATE OR REPLACE VIEW v AS SELECT c_phone FROM customer',
        'CREATE SCHEMA s',
        'CREATE ROLE r',
        'CREATE FUNCTION f() RETURNS bigint RETURN 1',
        'DROP TABLE t',
        'DROP VIEW v',
        'DROP SCHEMA s CASCADE',
        'ALTER TABLE t RENAME TO u',
        'ALTER TABLE t ADD COLUMN c varchar',
        'ALTER TABLE t EXECUTE optimize',
        'TRUNCATE TABLE t',
        'GRANT SELECT ON t TO ROLE r',
        'REVOKE SELECT ON t FROM ROLE r',
        'DENY SELECT ON t TO ROLE r',
        'CALL system.sync_partition_metadata()',
        "call system.runtime.kill_query(query_id => '1')",
        "SET SESSION query_max_run_time = '1h'",
        'SET ROLE admin',
        'SET PATH system.builtin',
        "SET TIME ZONE 'UTC'",
        'RESET SESSION a',
        'USE tpch.tiny',
        "COMMENT ON TABLE t IS 'x'",
        'ANALYZE t',
        'REFRESH MATERIALIZED VIEW mv',
        'EXPLAIN ANALYZE SELECT * FROM t',
        'explain analyze select c_phone from customer',
        'EXPLAIN SELECT 1',
        'EXPLAIN (TYPE IO) SELECT 1',
        'SHOW TABLES',
        'SHOW CREATE TABLE t',
        'DESCRIBE t',
        'PREPARE p FROM SELECT 1',
        'PREPARE p FROM DELETE FROM t',
        'EXECUTE p',
        "EXECUTE IMMEDIATE 'DROP TABLE t'",
        'DEALLOCATE PREPARE p',
        'START TRANSACTION',
        'START TRANSACTION READ WRITE',
        'COMMIT',
        'ROLLBACK',
      ],
    ],
    [
      'more than one statement',
      /^Exactly one statement is allowed, and this SQL holds [2-9]/,
      [
        'SELECT 1; DROP TABLE x',
        'SELECT 1; DROP TABLE t',
        'SELECT 1; SELECT 2',
        'SELECT 1;\nDELETE FROM t;',
        'SELECT 1 SELECT 2',
        'SELECT 1 /* ; */ ; DROP TABLE x',
        'SELECT 1 --\n; DROP TABLE x',
        "SELECT ';' AS a; INSERT INTO t VALUES (1)",
        // dt-sql-parser reads a program of statements without separators, and takes an unaliased LATERAL after a
        // comma for a table named lateral followed by a second statement: refused, never misread
        'SELECT * FROM customer c, LATERAL (SELECT 1)',
      ],
    ],
    [
      'table functions, which can pass SQL to a connector unchecked',
      /^Table functions are not allowed \(this one is [\w.]+\): a table function such as system\.query can send its own SQL/,
      [
        "SELECT * FROM TABLE(postgresql.system.query(query => 'DELETE FROM accounts'))",
        "SELECT * FROM TABLE(system.query(query => 'select 1'))",
        "select * from table(pg.system.query('select 1'))",
        "SELECT * FROM TABLE(elasticsearch.system.raw_query(schema => 'default', index => 'i', query => '{}'))",
        "SELECT * FROM customer c JOIN TABLE(mysql.system.query(query => 'select 1')) q ON true",
        "WITH x AS (SELECT * FROM TABLE(db.system.query(query => 'select 1'))) SELECT * FROM x",
        "SELECT (SELECT count(*) FROM TABLE(db.system.query(query => 'select 1')))",
        'SELECT * FROM TABLE(sequence(start => 1, stop => 10))',
        'SELECT * FROM TABLE(exclude_columns(input => TABLE(customer), columns => DESCRIPTOR(c_phone)))',
      ],
    ],
    [
      'inline functions, which redaction cannot see through',
      /^Inline functions \(WITH FUNCTION\) are not allowed/,
      ['WITH FUNCTION f(x varchar) RETURNS varchar RETURN x SELECT f(c_phone) FROM customer'],
    ],
    [
      'identifiers Trino does not accept',
      /^The identifier .+ is not valid in Trino/,
      ['SELECT `c_name` FROM customer', 'SELECT 1a FROM customer', 'SELECT c.`delete` FROM customer c'],
    ],
    [
      'SQL that does not parse, with the position',
      /^The SQL does not parse \(line \d+, column \d+\): .+\.$/,
      [
        'SELEC * FROM t',
        'SELECT * FROM',
        'SELECT a FROM t WHERE',
        'SELECT 1;;',
        "SELECT 'abc",
        'SELECT "abc FROM t',
        'SELECT 1 /* never closed',
        'WITH x AS (DELETE FROM t) SELECT 1',
        'WITH x AS (INSERT INTO t VALUES (1)) SELECT * FROM x',
        'SELECT * FROM t FOR UPDATE',
        'SELECT * FROM (DROP TABLE t)',
        'DEL/**/ETE FROM t',
        'SELECT 1 INTO t',
        'SELECT execute FROM t',
      ],
    ],
    ['empty input', /^The statement is empty/, ['', '   ', ';', '  ;  ', '   ;  ', '-- nothing\n', '/* nothing */']],
    [
      'statements nested deeper than parsing can afford (parse time grows steeply with depth)',
      /^The SQL nests parentheses or CASE 4\d deep; the limit is 40/,
      [
        `SELECT ${'('.repeat(41)}1${')'.repeat(41)}`,
        `SELECT ${'upper('.repeat(45)}c_name${')'.repeat(45)} FROM customer`,
        `SELECT ${'CASE WHEN true THEN '.repeat(41)}1${' END'.repeat(41)}`,
        `SELECT x FROM ${'(SELECT x FROM '.repeat(41)}t${') s'.repeat(41)}`,
      ],
    ],
  ])('%s', (_label, reason, statements) => {
    it.each(statements)('%j', (sql) => {
      expect(reasonOf(sql)).toMatch(reason);
    });
  });

  it('refuses statements longer than any question needs', () => {
    expect(reasonOf(`SELECT 1 ${' '.repeat(100_000)}`)).toMatch(/^The SQL is 100009 characters long; the limit is 100000/);
  });

  it('reports where the SQL stops parsing', () => {
    expect(reasonOf('SELECT a,\n  b FRM t')).toBe("The SQL does not parse (line 2, column 9): 't' is not valid at this position.");
  });
});

// The denylist is a second wall: no query the grammar accepts uses these words as keywords, so it is exercised on
// the parse trees of the statements the first wall refuses.
describe('the keyword denylist over parse-tree tokens', () => {
  const refusal = (sql: string) => {
    const parsed = parseTrino(sql);
    return refusalOf(parsed.tree, parsed.symbolOf);
  };

  it.each<[string, string]>([
    ['INSERT INTO t SELECT 1', 'INSERT'],
    ['insert into t select 1', 'INSERT'],
    ['UPDATE t SET a = 1', 'UPDATE'],
    ['DELETE FROM t', 'DELETE'],
    ['MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN UPDATE SET a = 1', 'MERGE'],
    ['CREATE TABLE x AS SELECT 1', 'CREATE'],
    ['DROP TABLE t', 'DROP'],
    ['ALTER TABLE t RENAME TO u', 'ALTER'],
    ['TRUNCATE TABLE t', 'TRUNCATE'],
    ['GRANT SELECT ON t TO ROLE r', 'GRANT'],
    ['REVOKE SELECT ON t FROM ROLE r', 'REVOKE'],
    ['CALL system.x()', 'CALL'],
    ['EXECUTE p', 'EXECUTE'],
    ['PREPARE p FROM SELECT 1', 'PREPARE'],
    ['DEALLOCATE PREPARE p', 'DEALLOCATE'],
    ["SET SESSION a = 'b'", 'SET'],
    ['RESET SESSION a', 'RESET'],
    ['USE tpch.tiny', 'USE'],
    ["COMMENT ON TABLE t IS 'x'", 'COMMENT'],
    ['ANALYZE t', 'ANALYZE'],
    ['REFRESH MATERIALIZED VIEW v', 'REFRESH'],
    ['EXPLAIN ANALYZE SELECT 1', 'EXPLAIN'],
    ['START TRANSACTION', 'START'],
    ['COMMIT', 'COMMIT'],
    ['ROLLBACK', 'ROLLBACK'],
  ])('finds %j by its keyword %s', (sql, keyword) => {
    expect(refusal(sql)).toBe(`The keyword ${keyword} is not allowed in a read-only query.`);
  });

  it.each([
    'SELECT updated_at, "delete", "drop" FROM t WHERE note = \'drop table\'',
    'SELECT comment, set, reset, call, use, analyze, refresh, grant, revoke, merge, truncate, rename, commit, rollback FROM t',
    'SELECT "update", start FROM t -- delete me',
    "SELECT listagg(c_name, ',' ON OVERFLOW TRUNCATE '...' WITH COUNT) WITHIN GROUP (ORDER BY c_name) FROM customer",
  ])('never matches a literal, a comment or a name: %j', (sql) => {
    expect(refusal(sql)).toBeUndefined();
  });
});

describe('validateStatement accepts', () => {
  it.each([
    'SELECT 1',
    'select n_name from tpch.tiny.nation;',
    'SELECT 1 ; ',
    'SELECT updated_at, "delete", "drop" FROM t WHERE note = \'drop table\'',
    'SELECT updated_at, "delete", "drop" FROM t WHERE note = \'drop table users; delete from x\'',
    'SELECT comment, start, "insert" FROM t',
    'SELECT comment, start, "insert", "update" FROM t',
    'SELECT comment, set, reset, call, use, analyze, refresh, grant, revoke, merge, truncate, rename, commit, rollback, transaction FROM t',
    'SELECT c.comment AS "create", c.set AS "execute" FROM t c',
    'SELECT "table", "select", "where" FROM t',
    'SELECT deleted, inserted_by, drop_count, created_at, alter_ego, granted FROM t',
    "SELECT count(*) FROM tpch.tiny.orders WHERE o_comment LIKE '%update%' -- update later",
    'SELECT 1 /* DROP TABLE t; DELETE FROM t */',
    "SELECT 'it''s; DROP TABLE t; --' AS s",
    'SELECT n_name AS "set", count(*) FROM tpch.tiny.nation GROUP BY 1',
    'WITH x AS (SELECT c_name FROM tpch.tiny.customer) SELECT * FROM x',
    'WITH RECURSIVE t(n) AS (VALUES (1) UNION ALL SELECT n + 1 FROM t WHERE n < 4) SELECT sum(n) FROM t',
    'SELECT 1 UNION ALL SELECT 2',
    'SELECT a FROM t EXCEPT SELECT a FROM u',
    'SELECT a FROM t INTERSECT SELECT a FROM u',
    'SELECT a FROM t INTERSECT DISTINCT SELECT a FROM u',
    '(SELECT 1)',
    '((SELECT 1) UNION (SELECT 2)) ORDER BY 1',
    'VALUES (1, 2)',
    'TABLE tpch.tiny.nation',
    'SELECT x FROM UNNEST(ARRAY[1, 2]) AS t(x)',
    'SELECT c_name, x FROM customer CROSS JOIN UNNEST(ARRAY[1, 2]) WITH ORDINALITY AS t(x, i)',
    'SELECT l.n FROM customer c, LATERAL (SELECT c.c_custkey AS n) l',
    "SELECT j.a FROM customer, JSON_TABLE(c_comment, 'lax $' COLUMNS (a varchar PATH 'lax $.a')) AS j",
    "SELECT listagg(c_name, ',' ON OVERFLOW TRUNCATE '...' WITH COUNT) WITHIN GROUP (ORDER BY c_name) FROM customer",
    'SELECT transform(ARRAY[1, 2], x -> x + 1)',
    'SELECT row_number() OVER (PARTITION BY c_nationkey ORDER BY c_acctbal DESC) FROM customer',
    'SELECT * FROM customer TABLESAMPLE BERNOULLI (10)',
    'SELECT n_name, count(*) FROM customer JOIN nation ON c_nationkey = n_nationkey GROUP BY ROLLUP (n_name)',
    "SELECT * FROM t FOR TIMESTAMP AS OF TIMESTAMP '2024-01-01 00:00:00'",
    'SELECT a FROM t ORDER BY a OFFSET 2 ROWS FETCH NEXT 3 ROWS WITH TIES',
    `SELECT ${'('.repeat(40)}1${')'.repeat(40)}`,
  ])('%j', (sql) => {
    const v = validateStatement(sql);
    expect(v.ok ? undefined : v.reason).toBeUndefined();
    // the canonical form is a fixed point: printing it again changes nothing
    if (v.ok) expect((validateStatement(v.statement.sql) as { statement: { sql: string } }).statement.sql).toBe(v.statement.sql);
  });
});

// What the engine runs is the canonical form of what the model wrote: comments gone, names in lower case, and a
// space wherever two tokens could be read as one by another lexer (Postgres nests comments, reads e'\'' as one
// string, compares quoted names exactly).
describe('the canonical form the engine runs', () => {
  it.each([
    ['select n_name from tpch.tiny.nation;', 'select n_name from tpch.tiny.nation;'],
    ['SELECT 1 ; ', 'SELECT 1 ;'],
    [
      "SELECT count(*) FROM tpch.tiny.orders WHERE o_comment LIKE '%update%' -- update later",
      "SELECT count(*) FROM tpch.tiny.orders WHERE o_comment LIKE '%update%'",
    ],
    ['SELECT 1 /* DROP TABLE t; DELETE FROM t */', 'SELECT 1'],
    ['SELECT a -- first\n  , b FROM t', 'SELECT a\n, b FROM t'],
    ['SELECT a/*x*/FROM t', 'SELECT a FROM t'],
    [
      "SELECT 1 /* /* */ AS x, ' */ , c_name FROM customer --' AS y FROM tpch.tiny.orders",
      "SELECT 1 AS x, ' */ , c_name FROM customer --' AS y FROM tpch.tiny.orders",
    ],
    ['SELECT C_Name, "C_Phone", "Q""x" FROM Tpch.Tiny."Customer"', 'SELECT c_name, "c_phone", "q""x" FROM tpch.tiny."customer"'],
    ["SELECT date'2024-01-01', x-1, count(*), a.b, arr[1] FROM t", "SELECT date '2024-01-01', x - 1, count(*), a.b, arr[1] FROM t"],
    ['SELECT transform(ARRAY[1,2], x->x+1)', 'SELECT transform(ARRAY[1, 2], x -> x + 1)'],
  ])('%j runs as %j', (written, canonical) => {
    const v = validateStatement(written);
    expect(v.ok ? v.statement.sql : v.reason).toBe(canonical);
  });
});
