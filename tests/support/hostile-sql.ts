import fc from 'fast-check';

// Statements a hostile model could write over the sample schema, for the property that no personal value reaches a
// caller who may not see it: random projections of personal and other columns through allowed functions, casts,
// CASE, concatenation, nested calls, stars (bare, qualified, inside calls), scalar and FROM subqueries, CTEs, set
// operations, quoting and comment tricks between tokens, and functions that are not allowed at all; and statements
// that use a personal value without showing it (conditions, joins, grouping, ordering, windows), read the table
// through `ONLY` or behind a WITH query that shadows a name, or name the engine's own catalog.

const TABLES = {
  customer: {
    alias: 'c',
    key: 'c_custkey',
    pii: ['c_name', 'c_address', 'c_phone'],
    other: ['c_custkey', 'c_nationkey', 'c_acctbal', 'c_mktsegment', 'c_comment'],
  },
  supplier: {
    alias: 's',
    key: 's_suppkey',
    pii: ['s_name', 's_address', 's_phone'],
    other: ['s_suppkey', 's_nationkey', 's_acctbal', 's_comment'],
  },
  nation: { alias: 'n', key: 'n_nationkey', pii: [], other: ['n_nationkey', 'n_name', 'n_regionkey', 'n_comment'] },
  orders: { alias: 'o', key: 'o_orderkey', pii: [], other: ['o_orderkey', 'o_custkey', 'o_totalprice', 'o_comment'] },
} as const;
type Table = keyof typeof TABLES;

/** Every personal column of the sample, to mark in a test engine. */
export const PERSONAL_COLUMNS = Object.entries(TABLES).flatMap(([t, d]) => d.pii.map((c) => ({ table: t, column: c })));

/** A marker no sample value holds and no function turns into something else: any character of it gives it away. */
export const MARK = 'ǂ';
/** Marked values are this long: they fit the narrowest personal column (a phone number, varchar(15) on Trino). */
export const MARKED_LENGTH = 15;
export const MARK_SAMPLE_SQL = PERSONAL_COLUMNS.map(
  ({ table, column }) => `UPDATE tiny.${table} SET ${column} = repeat('${MARK}', ${MARKED_LENGTH});`,
).join('\n');
/**
 * The same marks with their last character changed row by row (one of ǀ ǁ ǂ ǃ, by the row's key): every value keeps
 * its length in bytes, so the rows lie in the same order on disk, and a statement whose answer depends on a
 * personal value answers differently here than on MARK_SAMPLE_SQL's data.
 */
export const TWIN_SAMPLE_SQL = PERSONAL_COLUMNS.map(
  ({ table, column }) =>
    `UPDATE tiny.${table} SET ${column} = repeat('${MARK}', ${MARKED_LENGTH - 1}) || chr(448 + (${TABLES[table as Table].key} % 4)::int);`,
).join('\n');

const tableName = (t: Table) => fc.constantFrom(t, `tpch.tiny.${t}`, `tiny.${t}`, `"${t}"`, `TPCH.TINY.${t.toUpperCase()}`);
const columnOf = (t: Table, qualified: boolean) => {
  const d = TABLES[t];
  return fc
    .constantFrom<string>(...d.pii, ...d.other)
    .chain((c) => fc.constantFrom(qualified ? `${d.alias}.${c}` : c, qualified ? `${d.alias}."${c}"` : `"${c.toUpperCase()}"`));
};

/** A scalar expression over one table's row, `depth` levels of calls deep. */
function expression(t: Table, depth: number): fc.Arbitrary<string> {
  const leaf = fc.oneof({ weight: 4, arbitrary: columnOf(t, true) }, { weight: 1, arbitrary: fc.constantFrom("'x'", '1', 'NULL', "'ǃ'") });
  if (depth <= 0) return leaf;
  const sub = expression(t, depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom('upper', 'lower', 'reverse', 'trim', 'ltrim', 'to_hex', 'length', 'md5'), sub)
        .map(([f, e]) => (f === 'to_hex' || f === 'md5' ? `${f}(to_utf8(CAST(${e} AS varchar)))` : `${f}(CAST(${e} AS varchar))`)),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(sub, fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 12 }))
        .map(([e, a, b]) => `substr(CAST(${e} AS varchar), ${a}, ${b})`),
    },
    { weight: 2, arbitrary: fc.tuple(sub, sub).map(([a, b]) => `concat(CAST(${a} AS varchar), CAST(${b} AS varchar))`) },
    { weight: 1, arbitrary: fc.tuple(sub, sub).map(([a, b]) => `CAST(${a} AS varchar) || CAST(${b} AS varchar)`) },
    { weight: 1, arbitrary: fc.tuple(sub, sub).map(([a, b]) => `coalesce(CAST(${a} AS varchar), CAST(${b} AS varchar))`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(sub, sub, sub)
        .map(([a, b, c]) => `CASE WHEN ${a} IS NULL THEN CAST(${b} AS varchar) ELSE CAST(${c} AS varchar) END`),
    },
    { weight: 1, arbitrary: fc.tuple(sub, sub).map(([a, b]) => `if(${a} IS NOT NULL, CAST(${b} AS varchar), 'n')`) },
    { weight: 1, arbitrary: sub.map((e) => `(${e})`) },
    { weight: 1, arbitrary: fc.constantFrom(...TABLES.customer.pii).map((c) => `(SELECT max(${c}) FROM tpch.tiny.customer)`) },
    { weight: 1, arbitrary: sub.map((e) => `CAST(${e} AS varchar)`) },
  );
}

/** One select item over one table. */
function selectItem(t: Table): fc.Arbitrary<string> {
  const alias = TABLES[t].alias;
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(expression(t, 3), fc.option(fc.constantFrom('v', '"Who"', 'n_name', 'x1'), { nil: undefined }))
        .map(([e, a]) => (a ? `${e} AS ${a}` : e)),
    },
    { weight: 1, arbitrary: fc.constant('*') },
    { weight: 1, arbitrary: fc.constant(`${alias}.*`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        `${alias}`,
        `array_agg(${alias}.*)`,
        `count(${alias}.*)`,
        `max(${alias}.*)`,
        `to_json(${alias}.*)`,
        `query_to_xml('select * from tiny.${t}', true, false, '')`,
      ),
    },
  );
}

const PERSONAL_TABLES = ['customer', 'supplier'] as const;

/**
 * A condition on a personal column: true for some values and false for others on the twin sample. Its literals hold
 * no MARK, since the answer shows the statement.
 */
function personalCondition(t: (typeof PERSONAL_TABLES)[number], alias: string): fc.Arbitrary<string> {
  const column = fc.constantFrom(...TABLES[t].pii).map((c) => `${alias}.${c}`);
  return fc.oneof(
    column.map((c) => `${c} LIKE '%ǀ'`),
    column.map((c) => `substr(${c}, ${MARKED_LENGTH}, 1) IN ('ǁ', 'ǃ')`),
    column.map((c) => `substr(${c}, ${MARKED_LENGTH}, 1) > 'ǁ'`),
    column.map((c) => `strpos(${c}, 'ǀ') > 0`),
    column.map((c) => `length(${c}) = ${MARKED_LENGTH} AND substr(${c}, ${MARKED_LENGTH}) <> 'ǃ'`),
    column.map((c) => `codepoint(CAST(substr(${c}, ${MARKED_LENGTH}, 1) AS varchar(1))) % 2 = 0`),
  );
}

/** Statements whose output holds no personal column but whose answer would depend on one, if it were read. */
function oracleStatement(): fc.Arbitrary<string> {
  return fc.constantFrom(...PERSONAL_TABLES).chain((t) => {
    const { alias: a, key, pii } = TABLES[t];
    const nationKey = `${a}.${t === 'customer' ? 'c' : 's'}_nationkey`;
    const column = fc.constantFrom(...pii);
    return fc.oneof(
      personalCondition(t, a).map((p) => `SELECT count(*) AS n FROM tpch.tiny.${t} ${a} WHERE ${p}`),
      personalCondition(t, a).map((p) => `SELECT ${a}.${key} FROM tpch.tiny.${t} ${a} WHERE ${p} ORDER BY ${a}.${key}`),
      column.map((c) => `SELECT count(*) AS n FROM (SELECT ${c} FROM tpch.tiny.${t} GROUP BY ${c}) g`),
      column.map(
        (c) =>
          `SELECT substr(${c}, ${MARKED_LENGTH}, 1) IS NULL AS x, count(*) AS n FROM tpch.tiny.${t} GROUP BY substr(${c}, ${MARKED_LENGTH}, 1)`,
      ),
      column.map((c) => `SELECT ${a}.${key} FROM tpch.tiny.${t} ${a} ORDER BY ${a}.${c}, ${a}.${key} DESC`),
      column.map(
        (c) =>
          `SELECT ${a}.${key}, row_number() OVER (PARTITION BY ${a}.${c} ORDER BY ${a}.${key}) AS r FROM tpch.tiny.${t} ${a} ORDER BY ${a}.${key}`,
      ),
      personalCondition(t, a).map(
        (p) =>
          `SELECT n.n_name, count(*) AS n FROM tpch.tiny.nation n JOIN tpch.tiny.${t} ${a} ON ${nationKey} = n.n_nationkey AND ${p} GROUP BY n.n_name ORDER BY n.n_name`,
      ),
      personalCondition(t, a).map(
        (p) =>
          `SELECT n.n_name FROM tpch.tiny.nation n WHERE EXISTS (SELECT 1 FROM tpch.tiny.${t} ${a} WHERE ${nationKey} = n.n_nationkey AND ${p}) ORDER BY n.n_name`,
      ),
      personalCondition(t, a).map((p) => `SELECT count(*) FILTER (WHERE ${p}) AS n FROM tpch.tiny.${t} ${a}`),
      personalCondition(t, a).map((p) => `SELECT sum(CASE WHEN ${p} THEN 1 ELSE 0 END) AS n FROM tpch.tiny.${t} ${a}`),
    );
  });
}

/** Names an engine may read differently from the validator, and the engine's own catalog. */
const RELATION_TRICKS = [
  'SELECT c_name, c_phone FROM ONLY customer',
  'SELECT * FROM ONLY tpch.tiny.customer c',
  'WITH only AS (SELECT n_name AS c_name FROM tpch.tiny.nation) SELECT c_name FROM ONLY customer',
  'WITH customer AS (SELECT n_name AS c_name FROM tpch.tiny.nation) SELECT c_name FROM customer',
  'WITH q AS (SELECT c_name FROM customer) SELECT * FROM q',
  "SELECT histogram_bounds, most_common_vals FROM pg_stats WHERE attname IN ('c_name', 'c_phone', 's_name')",
  'SELECT * FROM pg_stats',
  'SELECT * FROM pg_catalog.pg_stats',
  'SELECT relname FROM pg_class',
  'SELECT attname FROM pg_attribute',
  'SELECT rolname FROM pg_roles',
  'SELECT name, setting FROM pg_settings',
  'SELECT * FROM information_schema.columns',
  'SELECT * FROM system.runtime.queries',
];

/** A whole statement: a select over one table, maybe wrapped in a CTE or a subquery, maybe in a UNION. */
export function hostileStatement(): fc.Arbitrary<string> {
  return fc
    .oneof(
      { weight: 3, arbitrary: projectingStatement() },
      { weight: 2, arbitrary: oracleStatement() },
      { weight: 1, arbitrary: fc.constantFrom(...RELATION_TRICKS) },
    )
    .chain((sql) => fc.tuple(fc.constant(sql), fc.array(fc.constantFrom(...COMMENTS), { maxLength: 3 }), fc.nat()))
    .map(([sql, comments, at]) => withComments(sql, comments, at));
}

/** A select over one table that shows columns, maybe wrapped in a CTE or a subquery, maybe in a UNION. */
function projectingStatement(): fc.Arbitrary<string> {
  const table = fc.constantFrom<Table>('customer', 'customer', 'supplier', 'nation', 'orders');
  const simple = table.chain((t) =>
    fc
      .tuple(fc.array(selectItem(t), { minLength: 1, maxLength: 4 }), tableName(t))
      .map(([items, name]) => `SELECT ${items.join(', ')} FROM ${name} ${TABLES[t].alias}`),
  );
  const shaped = simple.chain((s) =>
    fc.constantFrom(
      s,
      `WITH q AS (${s}) SELECT * FROM q`,
      `SELECT * FROM (${s}) AS sub`,
      `SELECT n_name FROM tpch.tiny.nation UNION ALL SELECT CAST(x AS varchar) FROM (${s}) AS u(x)`,
      `WITH "Customer" AS (SELECT 1 AS c_name) ${s}`,
    ),
  );
  return shaped;
}

/** Every generated statement ends with this LIMIT. */
export const HOSTILE_LIMIT = 20;

const COMMENTS = ['/* note */', '/* /* */', '-- tail\n', "/* ' */", '--\n', '/**/'];

/** Comments dropped between words, where a careless lexer would read them differently. */
function withComments(sql: string, comments: string[], seed: number): string {
  const words = sql.split(' ');
  for (const [i, comment] of comments.entries()) {
    const at = (seed + i * 7919) % (words.length + 1);
    words.splice(at, 0, comment);
  }
  return `${words.join(' ')} LIMIT ${HOSTILE_LIMIT}`;
}
