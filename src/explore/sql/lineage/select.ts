import type * as T from 'dt-sql-parser/dist/lib/trino/TrinoSqlParser';
import { is, nameOf, namesOf, primaryOf } from '../tree.ts';
import { originOf } from './expressions.ts';
import { UNKNOWN, opaque, qualifies, renamed, unqualified, type Context, type Ctes, type Field, type Scope } from './fields.ts';

// One item of a select list: `*` (every field of the FROM clause, in Trino's order), `t.*` (the fields of
// relation t, or the fields of a ROW value), or an expression named by its alias, by the column it names, or not
// at all (Trino then calls it `_col<position>`).

export function selectItemFields(item: T.SelectItemContext, scope: Scope, ctes: Ctes, ctx: Context): Field[] {
  if (item.selectAllWithoutTable()) return scope.fields.length > 0 ? unqualified(scope.fields) : [opaque(UNKNOWN)];
  const all = item.tableAllColumns();
  if (all) {
    const primary = all.primaryExpression();
    const prefix = is(primary, 'ColumnReference') ? namesOf(primary.columnName().qualifiedName()) : [];
    const matched = prefix.length > 0 ? scope.fields.filter((f) => qualifies(f.qualifier, prefix)) : [];
    // not a relation: `x.*` spreads a ROW value into as many columns as it has fields, which the text does not say
    const fields = matched.length > 0 ? unqualified(matched) : [opaque(originOf(primary, scope, ctes, ctx))];
    return item.columnAliases() ? renamed(fields, namesOf(item.columnAliases())) : fields;
  }
  const literal = item.selectLiteralColumnName();
  const expression = literal ?? item.selectExpressionColumnName();
  if (!expression) return [opaque(UNKNOWN)];
  const alias = item.identifier();
  const name = alias
    ? nameOf(alias)
    : literal
      ? namesOf(literal.columnRef().qualifiedName()).at(-1)
      : implicitName(item.selectExpressionColumnName()!);
  return [{ name, origin: originOf(expression, scope, ctes, ctx) }];
}

/** Trino names `c.c_name` and `(c_name)` after the column and `(r).f` after the field; anything else has no name. */
function implicitName(expression: T.SelectExpressionColumnNameContext): string | undefined {
  const primary = primaryOf(expression.expression());
  if (is(primary, 'ColumnReference')) return namesOf(primary.columnName().qualifiedName()).at(-1);
  if (is(primary, 'Dereference') && is(primaryOf(primary.primaryExpression()), 'ColumnReference')) return nameOf(primary.identifier());
  return undefined;
}
