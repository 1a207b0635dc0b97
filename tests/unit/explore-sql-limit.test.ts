import { describe, expect, it } from 'vitest';
import { ensureLimit, hasOuterLimit, validateStatement, type ParsedStatement } from '../../src/explore/sql/index.ts';

// The outermost query gets `LIMIT n` only when it has neither LIMIT nor FETCH FIRST; limits inside subqueries and
// CTEs do not bound the result; `LIMIT ALL` becomes `LIMIT n`; a trailing semicolon never survives.
const parsed = (sql: string): ParsedStatement => {
  const v = validateStatement(sql);
  if (!v.ok) throw new Error(v.reason);
  return v.statement;
};
const limited = (sql: string, n = 10000) => {
  const statement = parsed(sql);
  return ensureLimit(statement.sql, statement, n);
};

describe('ensureLimit', () => {
  it.each([
    ['SELECT 1', 'SELECT 1\nLIMIT 10000'],
    ['SELECT 1;', 'SELECT 1\nLIMIT 10000'],
    ['  SELECT 1  ;  ', 'SELECT 1\nLIMIT 10000'],
    ['SELECT 1; -- done', 'SELECT 1\nLIMIT 10000'],
    ['SELECT a FROM t -- no limit here', 'SELECT a FROM t\nLIMIT 10000'],
    ['SELECT a FROM t /* note */', 'SELECT a FROM t\nLIMIT 10000'],
    ['SELECT a FROM t ORDER BY a', 'SELECT a FROM t ORDER BY a\nLIMIT 10000'],
    ['SELECT a FROM t OFFSET 5', 'SELECT a FROM t OFFSET 5\nLIMIT 10000'],
    ["SELECT 'LIMIT 5' AS x", "SELECT 'LIMIT 5' AS x\nLIMIT 10000"],
    ['SELECT "limit" FROM t', 'SELECT "limit" FROM t\nLIMIT 10000'],
    ['SELECT * FROM (SELECT a FROM t LIMIT 5) s', 'SELECT * FROM (SELECT a FROM t LIMIT 5) s\nLIMIT 10000'],
    ['SELECT a FROM t WHERE a IN (SELECT b FROM u LIMIT 3)', 'SELECT a FROM t WHERE a IN (SELECT b FROM u LIMIT 3)\nLIMIT 10000'],
    ['WITH x AS (SELECT a FROM t LIMIT 2) SELECT * FROM x', 'WITH x AS (SELECT a FROM t LIMIT 2) SELECT * FROM x\nLIMIT 10000'],
    ['SELECT 1 UNION SELECT 2', 'SELECT 1 UNION SELECT 2\nLIMIT 10000'],
    ['(SELECT 1 LIMIT 1) UNION ALL (SELECT 2 LIMIT 1)', '(SELECT 1 LIMIT 1) UNION ALL (SELECT 2 LIMIT 1)\nLIMIT 10000'],
    ['(SELECT a FROM t LIMIT 5) ORDER BY a', '(SELECT a FROM t LIMIT 5) ORDER BY a\nLIMIT 10000'],
    ['VALUES (1), (2)', 'VALUES (1), (2)\nLIMIT 10000'],
    ['TABLE nation', 'TABLE nation\nLIMIT 10000'],
    // present already: unchanged, but for the semicolon
    ['SELECT a FROM t LIMIT 5', 'SELECT a FROM t LIMIT 5'],
    ['SELECT a FROM t LIMIT 5;', 'SELECT a FROM t LIMIT 5'],
    ['select a from t limit 50000', 'select a from t limit 50000'],
    ['SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY', 'SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY'],
    ['SELECT a FROM t FETCH FIRST ROW ONLY', 'SELECT a FROM t FETCH FIRST ROW ONLY'],
    [
      'SELECT a FROM t ORDER BY a OFFSET 2 ROWS FETCH NEXT 3 ROWS WITH TIES',
      'SELECT a FROM t ORDER BY a OFFSET 2 ROWS FETCH NEXT 3 ROWS WITH TIES',
    ],
    ['WITH x AS (SELECT a FROM t) SELECT * FROM x LIMIT 7', 'WITH x AS (SELECT a FROM t) SELECT * FROM x LIMIT 7'],
    ['SELECT 1 UNION SELECT 2 LIMIT 1', 'SELECT 1 UNION SELECT 2 LIMIT 1'],
    ['(SELECT a FROM t LIMIT 5)', '(SELECT a FROM t LIMIT 5)'],
    ['((SELECT a FROM t LIMIT 5));', '((SELECT a FROM t LIMIT 5))'],
    // LIMIT ALL means no limit: it becomes the automatic one
    ['SELECT a FROM t LIMIT ALL', 'SELECT a FROM t LIMIT 10000'],
    ['SELECT a FROM t limit all;', 'SELECT a FROM t limit 10000'],
    ["SELECT '😀' AS e, a FROM t LIMIT ALL ;", "SELECT '😀' AS e, a FROM t LIMIT 10000"],
    ['(SELECT a FROM t LIMIT ALL)', '(SELECT a FROM t LIMIT 10000)'],
    ["SELECT '😀;' AS e;", "SELECT '😀;' AS e\nLIMIT 10000"],
  ])('%j becomes %j', (sql, expected) => {
    const out = limited(sql);
    expect(out).toBe(expected);
    expect(validateStatement(out).ok).toBe(true);
  });

  it('uses the limit it is given', () => {
    expect(limited('SELECT 1', 25)).toBe('SELECT 1\nLIMIT 25');
  });

  it('refuses a limit that is not a positive integer', () => {
    for (const n of [0, -1, 1.5, Number.NaN]) expect(() => limited('SELECT 1', n)).toThrow(RangeError);
  });

  it('refuses SQL other than the statement it parsed', () => {
    expect(() => ensureLimit('SELECT 2', parsed('SELECT 1'), 10)).toThrow(/parsed from/);
  });
});

describe('hasOuterLimit', () => {
  it.each<[string, boolean]>([
    ['SELECT 1', false],
    ['SELECT 1 LIMIT 1', true],
    ['SELECT 1 LIMIT ALL', false],
    ['SELECT 1 FETCH FIRST 2 ROWS ONLY', true],
    ['SELECT * FROM (SELECT 1 LIMIT 1) t', false],
    ['WITH x AS (SELECT 1 LIMIT 1) SELECT * FROM x', false],
    ['(SELECT 1 LIMIT 1)', true],
  ])('%j: %s', (sql, expected) => {
    expect(hasOuterLimit(parsed(sql))).toBe(expected);
  });
});
