import { describe, expect, it } from 'vitest';
import type { CatalogEntry } from '../../src/explore/catalog.ts';
import { planQuestion } from '../../src/explore/planner.ts';
import { validateStatement } from '../../src/explore/sql/index.ts';
import { rewriteSemantic, semanticCalls, tablesByReference } from '../../src/explore/sql/semantic.ts';

// semantic_distance in the tree (docs/explore.md, "Hybrid SQL"): which table of the call's own FROM clause holds the
// column, the join the rewrite writes, and what is refused; no server (the integration test runs it on Trino).
const DEFAULTS = { catalog: 'tpch', schema: 'tiny' };
const COLUMNS: Record<string, string[]> = {
  'tpch.tiny.orders': ['o_orderkey', 'o_custkey', 'o_orderdate', 'o_comment'],
  'tpch.tiny.customer': ['c_custkey', 'c_name', 'c_comment'],
};
const KEYS: Record<string, string> = { 'tpch.tiny.orders': 'o_orderkey', 'tpch.tiny.customer': 'c_custkey' };

function rewrite(sql: string): string {
  const v = validateStatement(sql);
  if (!v.ok) throw new Error(v.reason);
  const calls = semanticCalls(v.statement, DEFAULTS, (t) => COLUMNS[t]);
  if ('refusal' in calls) return `REFUSED: ${calls.refusal}`;
  const text = rewriteSemantic(
    v.statement,
    calls,
    (c) => ({ lakeTable: `iceberg.lake.${c.column}`, documentId: 'd-1', keyColumn: KEYS[c.table]! }),
    (phrase) => `V'${phrase}'`,
    tablesByReference(v.statement, DEFAULTS),
  );
  return typeof text === 'string' ? text : `REFUSED: ${text.refusal}`;
}

const join = (n: number, column: string, qualifier: string, key: string) =>
  `LEFT JOIN (SELECT import_key AS "svc_semantic_key", embedding AS "svc_semantic_embedding" FROM "iceberg"."lake"."${column}" WHERE document_id = 'd-1') AS "svc_semantic_${n}" ON "svc_semantic_${n}"."svc_semantic_key" = CAST("${qualifier}"."${key}" AS varchar)`;

describe('semantic_distance rewritten into a join', () => {
  it.each([
    {
      sql: `SELECT o_orderkey FROM orders ORDER BY semantic_distance(o_comment, 'late') LIMIT 3`,
      out: `SELECT o_orderkey FROM (orders ${join(1, 'o_comment', 'orders', 'o_orderkey')}) ORDER BY cosine_distance("svc_semantic_1"."svc_semantic_embedding", V'late') LIMIT 3`,
    },
    {
      // a star names the relations' own stars, so the join's columns never show
      sql: `SELECT * FROM orders o WHERE semantic_distance(o.o_comment, 'late') < 0.5`,
      out: `SELECT "o".* FROM (orders o ${join(1, 'o_comment', 'o', 'o_orderkey')}) WHERE cosine_distance("svc_semantic_1"."svc_semantic_embedding", V'late') < 0.5`,
    },
    {
      // two tables, each joined to its own embeddings; the same call twice shares one join
      sql: `SELECT o.o_orderkey, semantic_distance(c_comment, 'a') AS d FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey ORDER BY semantic_distance(o_comment, 'b'), semantic_distance(c_comment, 'a')`,
      out: `SELECT o.o_orderkey, cosine_distance("svc_semantic_1"."svc_semantic_embedding", V'a') AS d FROM (orders o ${join(2, 'o_comment', 'o', 'o_orderkey')}) JOIN (customer c ${join(1, 'c_comment', 'c', 'c_custkey')}) ON o.o_custkey = c.c_custkey ORDER BY cosine_distance("svc_semantic_2"."svc_semantic_embedding", V'b'), cosine_distance("svc_semantic_1"."svc_semantic_embedding", V'a')`,
    },
  ])('$sql', ({ sql, out }) => {
    expect(rewrite(sql)).toBe(out);
  });

  it.each([
    [`SELECT * FROM orders UNION ALL SELECT * FROM orders ORDER BY semantic_distance(o_comment, 'x')`, 'ORDER BY of a UNION'],
    [`SELECT o_orderkey FROM orders ORDER BY semantic_distance(o_nothing, 'x')`, 'needs a column of a table read in the same FROM clause'],
    [`SELECT o_orderkey FROM (SELECT * FROM orders) t ORDER BY semantic_distance(o_comment, 'x')`, 'a column of a subquery'],
    [`SELECT o_orderkey FROM orders ORDER BY semantic_distance(o_comment, o_comment)`, 'must be a quoted phrase'],
    [`SELECT o_orderkey FROM orders ORDER BY semantic_distance(upper(o_comment), 'x')`, 'must be a column of a table'],
    [`SELECT o_orderkey FROM orders ORDER BY semantic_distance(o_comment, '  ')`, 'phrase of semantic_distance is empty'],
    [`SELECT o_orderkey FROM orders ORDER BY semantic_distance(o_comment)`, 'takes a column and a phrase'],
    [`SELECT * FROM orders JOIN customer USING (o_custkey) ORDER BY semantic_distance(o_comment, 'x')`, 'no USING or NATURAL join'],
    [`SELECT * FROM orders, (SELECT 1) ORDER BY semantic_distance(o_comment, 'x')`, 'every relation of its FROM clause named'],
  ])('refuses %s', (sql, reason) => {
    expect(rewrite(sql)).toContain(reason);
  });

  it('leaves a statement without semantic_distance alone', () => {
    const v = validateStatement('SELECT 1');
    expect(v.ok && semanticCalls(v.statement, DEFAULTS, () => undefined)).toEqual([]);
  });
});

describe("the offline planner's '… closest to …'", () => {
  const orders: CatalogEntry = {
    fqn: 'tpch.tiny.orders',
    name: 'orders',
    description: '',
    columns: [
      { name: 'o_orderkey', type: 'bigint', tags: [] },
      { name: 'o_orderdate', type: 'date', tags: [] },
      { name: 'o_comment', type: 'varchar(79)', tags: [] },
    ],
  };
  it.each([
    [
      "the 10 orders of 1995 whose comment is closest to 'delayed shipment'",
      "SELECT * FROM tpch.tiny.orders WHERE extract(year FROM o_orderdate) = 1995 ORDER BY semantic_distance(o_comment, 'delayed shipment') LIMIT 10",
    ],
    [
      "Orders whose comment is closest to 'Late Delivery'?",
      "SELECT * FROM tpch.tiny.orders ORDER BY semantic_distance(o_comment, 'Late Delivery') LIMIT 10",
    ],
  ])('%s', (question, sql) => {
    expect(planQuestion(question, [orders])).toMatchObject({ sql });
  });
  it('refuses a column it cannot find', () => {
    expect(planQuestion("the 5 orders whose colour is closest to 'red'", [orders])).toEqual({
      refusal: "no column of orders matches 'colour'",
    });
  });
});
