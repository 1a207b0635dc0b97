import { describe, expect, it } from 'vitest';
import { outputLineage, validateStatement } from '../../src/explore/sql/index.ts';

// Which base columns each output column derives from: the basis of redaction. Over-approximating is safe,
// under-approximating is a leak; 'unknown' is masked. Sources are written `table.column` (tpch.tiny omitted),
// in the order of their full names.
const schema = {
  'tpch.tiny.customer': ['c_custkey', 'c_name', 'c_address', 'c_nationkey', 'c_phone', 'c_acctbal', 'c_mktsegment', 'c_comment'],
  'tpch.tiny.orders': [
    'o_orderkey',
    'o_custkey',
    'o_orderstatus',
    'o_totalprice',
    'o_orderdate',
    'o_orderpriority',
    'o_clerk',
    'o_shippriority',
    'o_comment',
  ],
  'tpch.tiny.nation': ['n_nationkey', 'n_name', 'n_regionkey', 'n_comment'],
  'tpch.tiny.region': ['r_regionkey', 'r_name', 'r_comment'],
  'tpch.tiny.supplier': ['s_suppkey', 's_name', 's_address', 's_nationkey', 's_phone', 's_acctbal', 's_comment'],
  'tpch.sf1.customer': ['c_custkey', 'c_name', 'c_phone'],
};
const defaults = { catalog: 'tpch', schema: 'tiny' };

type Expected = [name: string, sources: string[] | 'unknown'];
const lineage = (sql: string): Expected[] => {
  const v = validateStatement(sql);
  if (!v.ok) throw new Error(v.reason);
  return outputLineage(v.statement, schema, defaults).map((c) => [
    c.name,
    c.unknown ? 'unknown' : c.sources.map((s) => `${s.table.replace(/^tpch\.tiny\./, '')}.${s.column}`),
  ]);
};
const columnsOf = (table: keyof typeof schema, short = table.replace(/^tpch\.tiny\./, '')): Expected[] =>
  schema[table].map((c) => [c, [`${short}.${c}`]]);

describe.each<[string, [string, Expected[]][]]>([
  [
    'columns and aliases',
    [
      ['SELECT c_name FROM customer', [['c_name', ['customer.c_name']]]],
      ['SELECT c.c_name AS who FROM tpch.tiny.customer c', [['who', ['customer.c_name']]]],
      ['SELECT c_name who FROM customer', [['who', ['customer.c_name']]]],
      ['SELECT customer.c_phone FROM customer', [['c_phone', ['customer.c_phone']]]],
      ['SELECT tiny.customer.c_phone FROM tpch.tiny.customer', [['c_phone', ['customer.c_phone']]]],
      ['SELECT "C_PHONE" FROM customer', [['c_phone', ['customer.c_phone']]]],
      ['SELECT "C_PHONE" FROM "CUSTOMER"', [['c_phone', ['customer.c_phone']]]],
      ['SELECT C_Phone AS "Phone" FROM Customer', [['phone', ['customer.c_phone']]]],
      ['SELECT c_phone AS n_name FROM customer', [['n_name', ['customer.c_phone']]]],
      [
        'SELECT c_name, c_name AS again, c_acctbal FROM customer',
        [
          ['c_name', ['customer.c_name']],
          ['again', ['customer.c_name']],
          ['c_acctbal', ['customer.c_acctbal']],
        ],
      ],
      ['SELECT c_phone FROM sf1.customer', [['c_phone', ['tpch.sf1.customer.c_phone']]]],
      ['SELECT (c_phone) FROM customer', [['c_phone', ['customer.c_phone']]]],
    ],
  ],
  [
    'expressions and function calls',
    [
      ['SELECT upper(c.c_name) AS who FROM tpch.tiny.customer c', [['who', ['customer.c_name']]]],
      ["SELECT concat(c_name, 'x') FROM customer", [['_col0', ['customer.c_name']]]],
      ["SELECT concat(c_name, ' / ', c_phone) FROM customer", [['_col0', ['customer.c_name', 'customer.c_phone']]]],
      ["SELECT concat(c_name, ' / ', c_phone) AS both FROM customer", [['both', ['customer.c_name', 'customer.c_phone']]]],
      ["SELECT c_name || '-' || c_address FROM customer", [['_col0', ['customer.c_address', 'customer.c_name']]]],
      [
        "SELECT CASE WHEN c_acctbal > 0 THEN c_phone ELSE 'none' END AS p FROM customer",
        [['p', ['customer.c_acctbal', 'customer.c_phone']]],
      ],
      [
        "SELECT CASE c_mktsegment WHEN 'BUILDING' THEN c_address END FROM customer",
        [['_col0', ['customer.c_address', 'customer.c_mktsegment']]],
      ],
      ['SELECT coalesce(c_phone, c_address) FROM customer', [['_col0', ['customer.c_address', 'customer.c_phone']]]],
      ['SELECT lower(substr(c_phone, 1, 3)) AS prefix FROM customer', [['prefix', ['customer.c_phone']]]],
      ['SELECT substring(c_name FROM 2 FOR 3) FROM customer', [['_col0', ['customer.c_name']]]],
      ['SELECT trim(c_address) FROM customer', [['_col0', ['customer.c_address']]]],
      [
        'SELECT CAST(c_phone AS varchar(20)) AS p, TRY_CAST(c_name AS varchar) FROM customer',
        [
          ['p', ['customer.c_phone']],
          ['_col1', ['customer.c_name']],
        ],
      ],
      ['SELECT length(c_phone) > 10 AS long_phone FROM customer', [['long_phone', ['customer.c_phone']]]],
      ['SELECT c_acctbal * 2 + 1 FROM customer', [['_col0', ['customer.c_acctbal']]]],
      ['SELECT c_name IS NULL FROM customer', [['_col0', ['customer.c_name']]]],
      ["SELECT c_name LIKE 'A%' FROM customer", [['_col0', ['customer.c_name']]]],
      ['SELECT ARRAY[c_name, c_phone] FROM customer', [['_col0', ['customer.c_name', 'customer.c_phone']]]],
      ['SELECT ROW(c_name, 1) FROM customer', [['_col0', ['customer.c_name']]]],
      ['SELECT transform(ARRAY[c_phone], x -> upper(x)) FROM customer', [['_col0', ['customer.c_phone']]]],
      ['SELECT transform(ARRAY[1], c_phone -> c_phone + 1) FROM customer', [['_col0', []]]],
      ["SELECT json_extract_scalar(c_comment, '$.a') FROM customer", [['_col0', ['customer.c_comment']]]],
      ['SELECT 1 AS one', [['one', []]]],
      [
        'SELECT 1 AS one, current_date, NULL',
        [
          ['one', []],
          ['_col1', []],
          ['_col2', []],
        ],
      ],
      ['SELECT extract(year FROM o_orderdate) FROM orders', [['_col0', ['orders.o_orderdate']]]],
      ["SELECT date_trunc('month', o_orderdate) AS m FROM orders", [['m', ['orders.o_orderdate']]]],
    ],
  ],
  [
    '* and t.*',
    [
      ['SELECT * FROM customer', columnsOf('tpch.tiny.customer')],
      ['SELECT * FROM nation', columnsOf('tpch.tiny.nation')],
      ['SELECT * FROM tpch.tiny.nation', columnsOf('tpch.tiny.nation')],
      ['SELECT n.* FROM nation n', columnsOf('tpch.tiny.nation')],
      ['SELECT nation.* FROM nation', columnsOf('tpch.tiny.nation')],
      [
        'SELECT n.*, r.r_name FROM nation n JOIN region r ON n_regionkey = r_regionkey',
        [...columnsOf('tpch.tiny.nation'), ['r_name', ['region.r_name']]],
      ],
      ['SELECT r.*, n.n_name FROM nation n, region r', [...columnsOf('tpch.tiny.region'), ['n_name', ['nation.n_name']]]],
      ['SELECT * FROM nation, region', [...columnsOf('tpch.tiny.nation'), ...columnsOf('tpch.tiny.region')]],
      ['SELECT t.* FROM (SELECT c_address FROM customer) t', [['c_address', ['customer.c_address']]]],
      [
        'SELECT t.* AS (a, b) FROM (SELECT c_name, c_acctbal FROM customer) t',
        [
          ['a', ['customer.c_name']],
          ['b', ['customer.c_acctbal']],
        ],
      ],
      ['SELECT *, 1 FROM region', [...columnsOf('tpch.tiny.region'), ['_col3', []]]],
      ['TABLE region', columnsOf('tpch.tiny.region')],
    ],
  ],
  [
    'subqueries in FROM',
    [
      ['SELECT x FROM (SELECT c_phone AS x FROM customer) AS s', [['x', ['customer.c_phone']]]],
      ['SELECT s.x FROM (SELECT c_phone AS x FROM customer) s', [['x', ['customer.c_phone']]]],
      ['SELECT t.a FROM (SELECT c_address AS a FROM customer) AS t', [['a', ['customer.c_address']]]],
      ['SELECT v.x FROM (SELECT c_phone FROM customer) AS v (x)', [['x', ['customer.c_phone']]]],
      [
        'SELECT * FROM (SELECT upper(c_name), c_acctbal FROM customer) AS t (a, b)',
        [
          ['a', ['customer.c_name']],
          ['b', ['customer.c_acctbal']],
        ],
      ],
      ['SELECT * FROM (SELECT c_phone AS n_name FROM customer) nation', [['n_name', ['customer.c_phone']]]],
      ['SELECT nation.n_name FROM (SELECT c_phone AS n_name FROM customer) nation', [['n_name', ['customer.c_phone']]]],
      ['SELECT p FROM (SELECT q AS p FROM (SELECT c_address AS q FROM customer) a) b', [['p', ['customer.c_address']]]],
      [
        'SELECT * FROM (SELECT * FROM (SELECT c_name, c_phone FROM customer))',
        [
          ['c_name', ['customer.c_name']],
          ['c_phone', ['customer.c_phone']],
        ],
      ],
      ['SELECT * FROM ((SELECT c_phone FROM customer)) t', [['c_phone', ['customer.c_phone']]]],
    ],
  ],
  [
    'CTEs',
    [
      ['WITH x AS (SELECT c_phone p FROM customer) SELECT p FROM x', [['p', ['customer.c_phone']]]],
      ['WITH x AS (SELECT c_phone p FROM customer) SELECT * FROM x', [['p', ['customer.c_phone']]]],
      ['WITH x AS (SELECT c_phone p FROM customer) SELECT x.p FROM x', [['p', ['customer.c_phone']]]],
      ['WITH x AS (SELECT c_phone p FROM customer), y AS (SELECT p AS q FROM x) SELECT q FROM y', [['q', ['customer.c_phone']]]],
      [
        'WITH a AS (SELECT c_name AS n FROM customer), b AS (SELECT n AS m FROM a), c AS (SELECT upper(m) AS k FROM b) SELECT k FROM c',
        [['k', ['customer.c_name']]],
      ],
      ['WITH x (a) AS (SELECT c_address FROM customer) SELECT a FROM x', [['a', ['customer.c_address']]]],
      [
        'WITH x (a, b) AS (SELECT c_name, c_acctbal FROM customer) SELECT b, a FROM x',
        [
          ['b', ['customer.c_acctbal']],
          ['a', ['customer.c_name']],
        ],
      ],
      ['WITH nation AS (SELECT c_phone AS n_name FROM customer) SELECT n_name FROM nation', [['n_name', ['customer.c_phone']]]],
      ['WITH customer AS (SELECT c_name FROM customer WHERE c_acctbal > 0) SELECT c_name FROM customer', [['c_name', ['customer.c_name']]]],
      [
        'WITH x AS (SELECT n_name AS v FROM nation) SELECT v FROM (WITH x AS (SELECT c_phone AS v FROM customer) SELECT v FROM x)',
        [['v', ['customer.c_phone']]],
      ],
      ['WITH x AS (SELECT c_phone AS v FROM customer) SELECT (SELECT max(v) FROM x) AS m', [['m', ['customer.c_phone']]]],
      ['WITH x AS (SELECT 1 AS v) SELECT v FROM tiny.x', [['v', ['x.v']]]],
      [
        'WITH RECURSIVE t(n, p) AS (SELECT 1, c_phone FROM customer UNION ALL SELECT n + 1, p FROM t WHERE n < 3) SELECT n, p FROM t',
        [
          ['n', []],
          ['p', ['customer.c_phone']],
        ],
      ],
      [
        'WITH RECURSIVE t(a, b) AS (SELECT c_name, 1 FROM customer UNION ALL SELECT n_name, length(a) FROM t, nation WHERE b < 3) SELECT b FROM t',
        [['b', ['customer.c_name', 'nation.n_name']]],
      ],
      [
        'WITH RECURSIVE a AS (SELECT c_phone FROM customer), t(n) AS (VALUES (1) UNION ALL SELECT n + 1 FROM t WHERE n < 3) SELECT c_phone, n FROM a, t',
        [
          ['c_phone', ['customer.c_phone']],
          ['n', []],
        ],
      ],
    ],
  ],
  [
    'set operations',
    [
      ['SELECT c_name FROM customer UNION SELECT n_name FROM nation', [['c_name', ['customer.c_name', 'nation.n_name']]]],
      ['SELECT n_name FROM nation UNION ALL SELECT s_name FROM supplier', [['n_name', ['nation.n_name', 'supplier.s_name']]]],
      [
        'SELECT n_name, n_nationkey FROM nation UNION ALL SELECT s_name, s_suppkey FROM supplier',
        [
          ['n_name', ['nation.n_name', 'supplier.s_name']],
          ['n_nationkey', ['nation.n_nationkey', 'supplier.s_suppkey']],
        ],
      ],
      ['SELECT n_name FROM nation EXCEPT SELECT c_name FROM customer', [['n_name', ['customer.c_name', 'nation.n_name']]]],
      ['SELECT n_name FROM nation INTERSECT SELECT c_name FROM customer', [['n_name', ['customer.c_name', 'nation.n_name']]]],
      [
        'SELECT r_name FROM region UNION SELECT n_name FROM nation UNION SELECT c_phone FROM customer',
        [['r_name', ['customer.c_phone', 'nation.n_name', 'region.r_name']]],
      ],
      [
        '(SELECT n_name FROM nation) UNION (SELECT c_address FROM customer) ORDER BY 1',
        [['n_name', ['customer.c_address', 'nation.n_name']]],
      ],
      [
        'SELECT x FROM (SELECT r_name AS x FROM region UNION ALL SELECT c_phone FROM customer) u',
        [['x', ['customer.c_phone', 'region.r_name']]],
      ],
      [
        'WITH u AS (SELECT n_name AS v FROM nation UNION SELECT s_phone FROM supplier) SELECT upper(v) FROM u',
        [['_col0', ['nation.n_name', 'supplier.s_phone']]],
      ],
      ['SELECT 1 AS k UNION ALL SELECT c_custkey FROM customer', [['k', ['customer.c_custkey']]]],
    ],
  ],
  [
    'joins',
    [
      [
        'SELECT c.c_name, o.o_totalprice FROM customer c JOIN orders o ON c.c_custkey = o.o_custkey',
        [
          ['c_name', ['customer.c_name']],
          ['o_totalprice', ['orders.o_totalprice']],
        ],
      ],
      [
        'SELECT c_name, o_totalprice FROM customer JOIN orders ON c_custkey = o_custkey',
        [
          ['c_name', ['customer.c_name']],
          ['o_totalprice', ['orders.o_totalprice']],
        ],
      ],
      [
        'SELECT n_name, count(*) FROM customer JOIN nation ON c_nationkey = n_nationkey GROUP BY n_name',
        [
          ['n_name', ['nation.n_name']],
          ['_col1', []],
        ],
      ],
      ['SELECT n_name FROM customer LEFT JOIN nation ON c_nationkey = n_nationkey', [['n_name', ['nation.n_name']]]],
      ['SELECT s_phone FROM customer FULL OUTER JOIN supplier ON c_nationkey = s_nationkey', [['s_phone', ['supplier.s_phone']]]],
      [
        'SELECT c_name, n_name, r_name FROM customer JOIN nation ON c_nationkey = n_nationkey JOIN region ON n_regionkey = r_regionkey',
        [
          ['c_name', ['customer.c_name']],
          ['n_name', ['nation.n_name']],
          ['r_name', ['region.r_name']],
        ],
      ],
      ['SELECT s_address FROM supplier, nation WHERE s_nationkey = n_nationkey', [['s_address', ['supplier.s_address']]]],
      ['SELECT c_nationkey FROM customer JOIN supplier ON c_nationkey = s_nationkey', [['c_nationkey', ['customer.c_nationkey']]]],
      ['SELECT n_comment FROM nation, customer', [['n_comment', ['nation.n_comment']]]],
      ['SELECT n_comment FROM nation CROSS JOIN customer', [['n_comment', ['nation.n_comment']]]],
      // an unqualified name two tables share counts as both (Trino would call it ambiguous)
      ['SELECT c_name FROM customer, sf1.customer', [['c_name', ['tpch.sf1.customer.c_name', 'customer.c_name']]]],
      ['SELECT a.c_name FROM customer a, customer b', [['c_name', ['customer.c_name']]]],
      ['SELECT n_name FROM nation, (SELECT c_phone AS n_name FROM customer) t', [['n_name', ['customer.c_phone', 'nation.n_name']]]],
      // USING and NATURAL: the shared columns first, once, from both sides; then the rest of each side
      [
        'SELECT * FROM nation n1 JOIN nation n2 USING (n_nationkey)',
        [
          ['n_nationkey', ['nation.n_nationkey']],
          ['n_name', ['nation.n_name']],
          ['n_regionkey', ['nation.n_regionkey']],
          ['n_comment', ['nation.n_comment']],
          ['n_name', ['nation.n_name']],
          ['n_regionkey', ['nation.n_regionkey']],
          ['n_comment', ['nation.n_comment']],
        ],
      ],
      [
        'SELECT * FROM (SELECT c_nationkey AS k, c_phone FROM customer) a JOIN (SELECT n_nationkey AS k, n_name FROM nation) b USING (k)',
        [
          ['k', ['customer.c_nationkey', 'nation.n_nationkey']],
          ['c_phone', ['customer.c_phone']],
          ['n_name', ['nation.n_name']],
        ],
      ],
      [
        'SELECT k FROM (SELECT c_phone AS k FROM customer) a JOIN (SELECT s_phone AS k FROM supplier) b USING (k)',
        [['k', ['customer.c_phone', 'supplier.s_phone']]],
      ],
      [
        'SELECT * FROM (SELECT c_nationkey AS k, c_phone FROM customer) a NATURAL JOIN (SELECT n_nationkey AS k, n_name FROM nation) b',
        [
          ['k', ['customer.c_nationkey', 'nation.n_nationkey']],
          ['c_phone', ['customer.c_phone']],
          ['n_name', ['nation.n_name']],
        ],
      ],
      ['SELECT a.* FROM (SELECT 1 AS k, c_phone FROM customer) a JOIN (SELECT 1 AS k) b USING (k)', [['c_phone', ['customer.c_phone']]]],
      [
        'SELECT * FROM (customer c JOIN nation n ON c_nationkey = n_nationkey) AS j (a, b, c, d, e, f, g, h, i, j, k, l)',
        [...columnsOf('tpch.tiny.customer'), ...columnsOf('tpch.tiny.nation')].map(([, s], i) => ['abcdefghijkl'[i]!, s] as Expected),
      ],
    ],
  ],
  [
    'aggregates and grouping',
    [
      ['SELECT count(*) AS n FROM customer', [['n', []]]],
      ['SELECT count(1) FROM customer', [['_col0', []]]],
      ['SELECT count(c_phone) FROM customer', [['_col0', ['customer.c_phone']]]],
      [
        'SELECT max(c_phone) m, count(c_name) k FROM customer',
        [
          ['m', ['customer.c_phone']],
          ['k', ['customer.c_name']],
        ],
      ],
      [
        'SELECT max(c_phone) m, count(c_name) k, min(c_acctbal) FROM customer',
        [
          ['m', ['customer.c_phone']],
          ['k', ['customer.c_name']],
          ['_col2', ['customer.c_acctbal']],
        ],
      ],
      ['SELECT count(DISTINCT c_address) FROM customer', [['_col0', ['customer.c_address']]]],
      ['SELECT array_agg(c_name) FROM customer', [['_col0', ['customer.c_name']]]],
      ['SELECT array_agg(c_custkey ORDER BY c_phone) FROM customer', [['_col0', ['customer.c_custkey', 'customer.c_phone']]]],
      ["SELECT count(*) FILTER (WHERE c_phone LIKE '1%') FROM customer", [['_col0', ['customer.c_phone']]]],
      [
        "SELECT listagg(c_name, ',') WITHIN GROUP (ORDER BY c_acctbal) FROM customer",
        [['_col0', ['customer.c_acctbal', 'customer.c_name']]],
      ],
      [
        'SELECT c_mktsegment, sum(c_acctbal) FROM customer GROUP BY c_mktsegment HAVING count(c_phone) > 1',
        [
          ['c_mktsegment', ['customer.c_mktsegment']],
          ['_col1', ['customer.c_acctbal']],
        ],
      ],
      [
        'SELECT n_name, avg(c_acctbal) FROM customer JOIN nation ON c_nationkey = n_nationkey GROUP BY ROLLUP (n_name)',
        [
          ['n_name', ['nation.n_name']],
          ['_col1', ['customer.c_acctbal']],
        ],
      ],
      [
        'SELECT c_mktsegment, grouping(c_mktsegment) FROM customer GROUP BY CUBE (c_mktsegment)',
        [
          ['c_mktsegment', ['customer.c_mktsegment']],
          ['_col1', []],
        ],
      ],
      ['SELECT DISTINCT c_nationkey FROM customer', [['c_nationkey', ['customer.c_nationkey']]]],
    ],
  ],
  [
    'window functions',
    [
      ['SELECT lag(c_phone) OVER (ORDER BY c_custkey) AS prev FROM customer', [['prev', ['customer.c_custkey', 'customer.c_phone']]]],
      [
        'SELECT first_value(c_name) OVER (PARTITION BY c_nationkey) FROM customer',
        [['_col0', ['customer.c_name', 'customer.c_nationkey']]],
      ],
      [
        'SELECT row_number() OVER (PARTITION BY c_nationkey ORDER BY c_acctbal) rn FROM customer',
        [['rn', ['customer.c_acctbal', 'customer.c_nationkey']]],
      ],
      ['SELECT rank() OVER w FROM customer WINDOW w AS (ORDER BY c_acctbal)', [['_col0', []]]],
      ['SELECT max(c_address) OVER w FROM customer WINDOW w AS (PARTITION BY c_nationkey)', [['_col0', ['customer.c_address']]]],
    ],
  ],
  [
    'subqueries in expressions, correlated or not',
    [
      ['SELECT (SELECT max(c_phone) FROM customer) AS x', [['x', ['customer.c_phone']]]],
      [
        'SELECT n_name, (SELECT max(c_phone) FROM customer WHERE c_nationkey = n_nationkey) FROM nation',
        [
          ['n_name', ['nation.n_name']],
          ['_col1', ['customer.c_phone']],
        ],
      ],
      [
        'SELECT (SELECT count(*) FROM orders o WHERE o.o_custkey = c.c_custkey) AS n, c.c_phone FROM customer c',
        [
          ['n', []],
          ['c_phone', ['customer.c_phone']],
        ],
      ],
      ['SELECT (SELECT c.c_phone) FROM customer c', [['_col0', ['customer.c_phone']]]],
      ['SELECT (SELECT c_address FROM nation LIMIT 1) FROM customer', [['_col0', ['customer.c_address']]]],
      ['SELECT (SELECT n_name FROM nation WHERE n_nationkey = c_nationkey) FROM customer', [['_col0', ['nation.n_name']]]],
      ['SELECT EXISTS (SELECT c_name FROM customer) AS e', [['e', ['customer.c_name']]]],
      ['SELECT n_name IN (SELECT c_name FROM customer) FROM nation', [['_col0', ['customer.c_name', 'nation.n_name']]]],
      [
        'SELECT n_nationkey = ANY (SELECT c_nationkey FROM customer) FROM nation',
        [['_col0', ['customer.c_nationkey', 'nation.n_nationkey']]],
      ],
      [
        'SELECT (SELECT (SELECT max(s_phone) FROM supplier WHERE s_nationkey = n.n_nationkey)) FROM nation n',
        [['_col0', ['supplier.s_phone']]],
      ],
    ],
  ],
  [
    'LATERAL, UNNEST and JSON_TABLE',
    [
      ['SELECT l.p FROM customer c, LATERAL (SELECT c.c_phone AS p) l', [['p', ['customer.c_phone']]]],
      [
        'SELECT l.* FROM customer c CROSS JOIN LATERAL (SELECT upper(c_name) AS u, 1 AS one) l',
        [
          ['u', ['customer.c_name']],
          ['one', []],
        ],
      ],
      ["SELECT u.v FROM customer CROSS JOIN UNNEST(split(c_address, ' ')) AS u(v)", [['v', ['customer.c_address']]]],
      [
        'SELECT v, i FROM customer, UNNEST(ARRAY[c_phone]) WITH ORDINALITY AS u(v, i)',
        [
          ['v', ['customer.c_phone']],
          ['i', ['customer.c_phone']],
        ],
      ],
      ['SELECT x FROM UNNEST(ARRAY[1, 2]) AS t(x)', [['x', []]]],
      ["SELECT j.a FROM customer, JSON_TABLE(c_comment, 'lax $' COLUMNS (a varchar PATH 'lax $.a')) AS j", [['a', ['customer.c_comment']]]],
      ['SELECT (SELECT c_phone FROM UNNEST(ARRAY[1]) AS u(x)) FROM customer', [['_col0', ['customer.c_phone']]]],
    ],
  ],
  [
    'VALUES',
    [
      ['VALUES 1', [['_col0', []]]],
      [
        "VALUES (1, 'a'), (2, 'b')",
        [
          ['_col0', []],
          ['_col1', []],
        ],
      ],
      [
        "SELECT * FROM (VALUES (1, 'a')) AS t (id, label)",
        [
          ['id', []],
          ['label', []],
        ],
      ],
      ['SELECT (VALUES (SELECT max(c_phone) FROM customer))', [['_col0', ['customer.c_phone']]]],
      ["SELECT c_name FROM customer UNION ALL VALUES ('x')", [['c_name', ['customer.c_name']]]],
    ],
  ],
])('lineage: %s', (_group, cases) => {
  it.each(cases)('%s', (sql, expected) => {
    expect(lineage(sql)).toEqual(expected);
  });
});

// Whatever cannot be traced is unknown, so it is masked: unknown tables read with *, names that resolve to
// nothing, widths the text does not tell, constructs not traced.
describe('lineage fails closed', () => {
  it.each<[string, Expected[]]>([
    ['SELECT nope FROM customer', [['nope', 'unknown']]],
    ['SELECT c.nope FROM customer c', [['nope', 'unknown']]],
    ['SELECT customer.c_phone FROM customer c', [['c_phone', 'unknown']]],
    ['SELECT * FROM other.place.table_x', [['_col0', 'unknown']]],
    [
      'SELECT *, c_name FROM customer, other.place.table_x',
      [...columnsOf('tpch.tiny.customer'), ['_col8', 'unknown'], ['c_name', 'unknown']],
    ],
    ['SELECT t.* FROM other.place.table_x t', [['_col0', 'unknown']]],
    ['SELECT * FROM customer, UNNEST(ARRAY[1, 2])', [...columnsOf('tpch.tiny.customer'), ['_col8', 'unknown']]],
    ['SELECT r.* FROM (SELECT CAST(ROW(c_phone) AS ROW(f varchar)) AS r FROM customer) s', [['_col0', 'unknown']]],
    ['SELECT _col0 FROM (SELECT upper(c_name) FROM customer)', [['_col0', 'unknown']]],
    [
      'SELECT * FROM customer MATCH_RECOGNIZE (ORDER BY c_custkey MEASURES A.c_phone AS p PATTERN (A) DEFINE A AS true)',
      [['_col0', 'unknown']],
    ],
    ['SELECT c_name FROM customer UNION ALL SELECT * FROM other.place.table_x', [['c_name', 'unknown']]],
    ['SELECT a FROM (SELECT * FROM other.place.table_x) AS t (a)', [['a', 'unknown']]],
    ['SELECT * FROM (SELECT c_name, c_phone FROM customer) AS t (a)', [['a', ['customer.c_name', 'customer.c_phone']]]],
    ['WITH x (a) AS (SELECT c_name, c_phone FROM customer) SELECT a FROM x', [['a', ['customer.c_name', 'customer.c_phone']]]],
    ['WITH RECURSIVE t AS (SELECT c_phone AS p FROM customer UNION ALL SELECT p FROM t) SELECT p FROM t', [['p', 'unknown']]],
    [
      'SELECT c_name FROM customer UNION SELECT n_name, n_comment FROM nation',
      [['c_name', ['customer.c_name', 'nation.n_comment', 'nation.n_name']]],
    ],
  ])('%s', (sql, expected) => {
    expect(lineage(sql)).toEqual(expected);
  });

  it('follows the columns of a table the schema does not list by their names', () => {
    expect(lineage('SELECT x.col1 FROM hive.db.unknown_table x')).toEqual([['col1', ['hive.db.unknown_table.col1']]]);
    expect(lineage('SELECT x.col1, col2 FROM hive.db.unknown_table x')).toEqual([
      ['col1', ['hive.db.unknown_table.col1']],
      ['col2', ['hive.db.unknown_table.col2']],
    ]);
  });

  it('lets a name that a listed table lacks also come from a table that is not listed', () => {
    expect(lineage('SELECT c_phone, mystery FROM customer, hive.db.unknown_table')).toEqual([
      ['c_phone', ['hive.db.unknown_table.c_phone', 'customer.c_phone']],
      ['mystery', ['hive.db.unknown_table.mystery']],
    ]);
  });

  it('binds a name an unlisted inner table may lack to the outer query as well', () => {
    expect(lineage('SELECT (SELECT c_phone FROM hive.db.unknown_table LIMIT 1) FROM customer')).toEqual([
      ['_col0', ['hive.db.unknown_table.c_phone', 'customer.c_phone']],
    ]);
  });

  it('counts a name two joined tables share (USING) as coming from both', () => {
    const v = validateStatement('SELECT secret FROM a JOIN b USING (id)');
    if (!v.ok) throw new Error(v.reason);
    const shared = { 'tpch.tiny.a': ['id', 'secret'], 'tpch.tiny.b': ['id', 'secret'] };
    expect(outputLineage(v.statement, shared, defaults)).toEqual([
      {
        name: 'secret',
        sources: [
          { table: 'tpch.tiny.a', column: 'secret' },
          { table: 'tpch.tiny.b', column: 'secret' },
        ],
        unknown: false,
      },
    ]);
  });

  it('reads schema table and column names case-insensitively', () => {
    const v = validateStatement('SELECT c_phone FROM customer');
    if (!v.ok) throw new Error(v.reason);
    expect(outputLineage(v.statement, { 'TPCH.Tiny.Customer': ['C_PHONE'] }, { catalog: 'TPCH', schema: 'TINY' })).toEqual([
      { name: 'c_phone', sources: [{ table: 'tpch.tiny.customer', column: 'c_phone' }], unknown: false },
    ]);
  });
});
