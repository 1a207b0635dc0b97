import type * as T from 'dt-sql-parser/dist/lib/trino/TrinoSqlParser';
import { is, nameOf, namesOf, primaryOf } from '../tree.ts';
import { originOf } from './expressions.ts';
import {
  NOTHING,
  UNKNOWN,
  isExact,
  opaque,
  renamed,
  union,
  unqualified,
  type Context,
  type Ctes,
  type Field,
  type Scope,
} from './fields.ts';
import { fromClause, relationFields } from './relations.ts';
import { selectItemFields } from './select.ts';

// Queries: WITH (CTEs see the ones defined before them; a recursive one is iterated to a fixed point), set
// operations (output column i comes from column i of every branch; names from the first), VALUES, TABLE t,
// parenthesised queries, and SELECT.

const MAX_ROUNDS = 32;

export function queryFields(query: unknown, ctes: Ctes, outer: Scope | undefined, ctx: Context): Field[] {
  if (!is(query, 'QueryStatement')) return [opaque(UNKNOWN)];
  const visible = new Map(ctes);
  const w = query.with();
  for (const named of w?.namedQuery() ?? []) {
    const name = nameOf(named.identifier());
    const aliases = named.columnAliases() ? namesOf(named.columnAliases()) : undefined;
    const fields = w!.KW_RECURSIVE()
      ? recursive(named, name, aliases, visible, outer, ctx)
      : definition(named, aliases, visible, outer, ctx);
    visible.set(name, fields);
  }
  return termFields(query.queryNoWith().queryTerm(), visible, outer, ctx);
}

function definition(
  named: T.NamedQueryContext,
  aliases: string[] | undefined,
  ctes: Ctes,
  outer: Scope | undefined,
  ctx: Context,
): Field[] {
  const fields = unqualified(queryFields(named.query(), ctes, outer, ctx));
  return aliases ? renamed(fields, aliases) : fields;
}

/**
 * WITH RECURSIVE: start from columns that derive from nothing and widen until a round adds no source (else give
 * up as unknown). A query without column names cannot be recursive in Trino; it is read once, with any reference
 * to itself unknown.
 */
function recursive(
  named: T.NamedQueryContext,
  name: string,
  aliases: string[] | undefined,
  ctes: Ctes,
  outer: Scope | undefined,
  ctx: Context,
): Field[] {
  if (!aliases) return definition(named, aliases, new Map([...ctes, [name, [opaque(UNKNOWN)]]]), outer, ctx);
  let current: Field[] = aliases.map((n) => ({ name: n, origin: NOTHING }));
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const next = definition(named, aliases, new Map([...ctes, [name, current]]), outer, ctx);
    if (sameOrigins(next, current)) return next;
    current = next.map((f, i) => ({ ...f, origin: union([f.origin, current[i]?.origin ?? UNKNOWN]) }));
  }
  return aliases.map((n) => ({ name: n, origin: UNKNOWN }));
}

const sameOrigins = (a: readonly Field[], b: readonly Field[]) =>
  a.length === b.length &&
  a.every(
    (f, i) =>
      f.origin.unknown === b[i]!.origin.unknown &&
      f.origin.sources.size === b[i]!.origin.sources.size &&
      [...f.origin.sources].every((s) => b[i]!.origin.sources.has(s)),
  );

function termFields(term: T.QueryTermContext, ctes: Ctes, outer: Scope | undefined, ctx: Context): Field[] {
  if (is(term, 'SetOperation')) {
    return combined(termFields(term.queryTerm(0)!, ctes, outer, ctx), termFields(term.queryTerm(1)!, ctes, outer, ctx));
  }
  if (is(term, 'QueryTermDefault')) return primaryFields(term.queryPrimary(), ctes, outer, ctx);
  return [opaque(UNKNOWN)];
}

/** UNION, EXCEPT, INTERSECT: position by position; when a width is not known, every column may hold anything. */
function combined(left: Field[], right: Field[]): Field[] {
  if (isExact(left) && isExact(right) && left.length === right.length) {
    return left.map((f, i) => ({ name: f.name, origin: union([f.origin, right[i]!.origin]) }));
  }
  const all = union([...left, ...right].map((f) => f.origin));
  const exact = isExact(left) ? left : isExact(right) ? right : undefined;
  return exact ? exact.map((f, i) => ({ name: left[i]?.name ?? f.name, origin: all })) : [opaque(all)];
}

function primaryFields(primary: T.QueryPrimaryContext, ctes: Ctes, outer: Scope | undefined, ctx: Context): Field[] {
  if (is(primary, 'QueryPrimaryDefault')) return specificationFields(primary.querySpecification(), ctes, outer, ctx);
  if (is(primary, 'Subquery')) return termFields(primary.queryNoWith().queryTerm(), ctes, outer, ctx);
  if (is(primary, 'Table')) return unqualified(relationFields(namesOf(primary.tableRef()), ctes, ctx));
  if (is(primary, 'InlineTable')) return valuesFields(primary.expression(), ctes, outer, ctx);
  return [opaque(UNKNOWN)];
}

/** VALUES: a row written as (a, b) or ROW(a, b) gives one column per item; anything else is one column. */
function valuesFields(rows: T.ExpressionContext[], ctes: Ctes, outer: Scope | undefined, ctx: Context): Field[] {
  const scope: Scope = { fields: [], outer };
  const widths = new Set<number>();
  const columns: Field[][] = rows.map((row) => {
    const primary = primaryOf(row);
    const items = is(primary, 'RowConstructor') ? primary.expression() : [row];
    widths.add(items.length);
    return items.map((item) => ({ origin: originOf(item, scope, ctes, ctx) }));
  });
  if (widths.size !== 1) return [opaque(union(columns.flat().map((f) => f.origin)))];
  return columns.reduce((acc, row) => acc.map((f, i) => ({ origin: union([f.origin, row[i]!.origin]) })));
}

function specificationFields(spec: T.QuerySpecificationContext, ctes: Ctes, outer: Scope | undefined, ctx: Context): Field[] {
  const scope: Scope = { fields: fromClause(spec.relation(), ctes, outer, ctx), outer };
  return spec
    .selectList()
    .selectItem()
    .flatMap((item) => selectItemFields(item, scope, ctes, ctx));
}
