import type * as T from 'dt-sql-parser/dist/lib/trino/TrinoSqlParser';
import { qualify } from '../tables.ts';
import { is, nameOf, namesOf } from '../tree.ts';
import { originOf } from './expressions.ts';
import {
  UNKNOWN,
  aliased,
  isExact,
  opaque,
  sourceKey,
  union,
  unqualified,
  type Context,
  type Ctes,
  type Field,
  type Scope,
} from './fields.ts';
import { queryFields } from './queries.ts';

// The FROM clause as Trino's analyzer sees it: one ordered list of qualified fields. Joins concatenate, except
// USING and NATURAL, which put the shared columns first (once, unqualified, from both sides), then the rest of
// the left, then the rest of the right. LATERAL, UNNEST and JSON_TABLE may refer to the relations to their left;
// an ordinary subquery only to the enclosing query's scope.

export function fromClause(relations: T.RelationContext[], ctes: Ctes, outer: Scope | undefined, ctx: Context): Field[] {
  const fields: Field[] = [];
  for (const r of relations) fields.push(...relation(r, ctes, outer, fields.slice(), ctx));
  return fields;
}

function relation(r: T.RelationContext, ctes: Ctes, outer: Scope | undefined, left: Field[], ctx: Context): Field[] {
  if (is(r, 'RelationDefault')) return sampled(r.sampledRelation(), ctes, outer, left, ctx);
  if (!is(r, 'JoinRelation')) return [opaque(UNKNOWN)];
  const leftFields = relation(r.relation(0)!, ctes, outer, left, ctx);
  const rightNode = r.sampledRelation() ?? r.relation(1);
  const seen = [...left, ...leftFields];
  const rightFields =
    is(rightNode, 'JoinRelation') || is(rightNode, 'RelationDefault')
      ? relation(rightNode, ctes, outer, seen, ctx)
      : sampled(rightNode as T.SampledRelationContext, ctes, outer, seen, ctx);
  const criteria = r.joinCriteria();
  if (criteria?.KW_USING()) return joinedUsing(leftFields, rightFields, namesOf(criteria));
  if (r.KW_NATURAL()) {
    if (!isExact(leftFields) || !isExact(rightFields)) return [...leftFields, ...rightFields];
    const shared = leftFields.filter((f) => f.name !== undefined && rightFields.some((g) => g.name === f.name)).map((f) => f.name!);
    return joinedUsing(leftFields, rightFields, [...new Set(shared)]);
  }
  return [...leftFields, ...rightFields];
}

function joinedUsing(left: Field[], right: Field[], columns: string[]): Field[] {
  const pick = (side: Field[], name: string) => side.find((f) => !f.wild && f.name === name);
  const shared = columns.map((name) => {
    const both = [pick(left, name), pick(right, name)];
    // a side that lacks the column by name can only hold it in a field whose name is not known
    const origin = both.every(Boolean) ? union(both.map((f) => f!.origin)) : union([...left, ...right].map((f) => f.origin));
    return { name, origin } satisfies Field;
  });
  const used = new Set(columns.flatMap((name) => [pick(left, name), pick(right, name)]).filter(Boolean));
  return [...shared, ...left.filter((f) => !used.has(f)), ...right.filter((f) => !used.has(f))];
}

function sampled(s: T.SampledRelationContext, ctes: Ctes, outer: Scope | undefined, left: Field[], ctx: Context): Field[] {
  const pattern = s.patternRecognition();
  const fields = aliasedFields(pattern.aliasedRelation(), ctes, outer, left, ctx);
  if (!pattern.KW_MATCH_RECOGNIZE()) return fields;
  // MATCH_RECOGNIZE: partition columns and measures, or every row with its measures; not traced
  const alias = pattern.identifier() ? nameOf(pattern.identifier()) : undefined;
  return aliased([opaque(UNKNOWN)], alias, pattern.columnAliases() ? namesOf(pattern.columnAliases()) : undefined);
}

function aliasedFields(a: T.AliasedRelationContext, ctes: Ctes, outer: Scope | undefined, left: Field[], ctx: Context): Field[] {
  const alias = a.identifier() ? nameOf(a.identifier()) : undefined;
  const columns = a.columnAliases() ? namesOf(a.columnAliases()) : undefined;
  return aliased(primaryRelation(a.relationPrimary(), ctes, outer, left, ctx), alias, columns);
}

function primaryRelation(p: T.RelationPrimaryContext, ctes: Ctes, outer: Scope | undefined, left: Field[], ctx: Context): Field[] {
  if (is(p, 'TableName')) {
    const ref = p.tableOrViewName().tableRef() ?? p.tableOrViewName().viewRef();
    return relationFields(namesOf(ref), ctes, ctx);
  }
  if (is(p, 'ParenthesizedRelation')) return relation(p.relation(), ctes, outer, left, ctx);
  if (!is(p, 'ExpressionSourceTable')) return [opaque(UNKNOWN)];
  const source = p.relationSourceTable();
  const lateral: Scope = { fields: left, outer };
  if (is(source, 'SubqueryRelation')) return unqualified(queryFields(source.query(), ctes, outer, ctx));
  if (is(source, 'Lateral')) return unqualified(queryFields(source.query(), ctes, lateral, ctx));
  // UNNEST yields one column per array (two per map, one per field of a ROW element, plus ordinality): every one
  // of them comes from the arguments
  if (is(source, 'Unnest')) return [opaque(union(source.expression().map((e) => originOf(e, lateral, ctes, ctx))))];
  if (is(source, 'JsonTable')) {
    const origin = originOf(source.jsonPathInvocation(), lateral, ctes, ctx);
    return jsonColumns(source.jsonTableColumn()).map((name) => ({ name, origin }));
  }
  return [opaque(UNKNOWN)]; // TABLE(function(...)): refused by validation, and not traced
}

function jsonColumns(columns: T.JsonTableColumnContext[]): string[] {
  return columns.flatMap((c) => {
    if (is(c, 'NestedColumns')) return jsonColumns(c.jsonTableColumn());
    const id = (c as unknown as { identifier(): T.IdentifierContext | null }).identifier();
    return id ? [nameOf(id)] : [];
  });
}

/** A CTE in scope by that name, else a base table: its columns from the schema, or a wild field when not listed. */
export function relationFields(parts: string[], ctes: Ctes, ctx: Context): Field[] {
  const cte = parts.length === 1 ? ctes.get(parts[0]!) : undefined;
  if (cte) return aliased(cte, parts[0], undefined);
  const table = qualify(parts, ctx.defaults);
  const qualifier = table.split('.');
  const columns = ctx.schema.get(table);
  if (!columns) return [{ qualifier, origin: UNKNOWN, wild: { table } }];
  return columns.map((column) => ({ name: column, qualifier, origin: { sources: new Set([sourceKey(table, column)]), unknown: false } }));
}
