import type { FunctionCallContext } from 'dt-sql-parser/dist/lib/trino/TrinoSqlParser';
import { childrenOf, is, isTerminal, kindOf, nameOf, namesOf, type Node } from '../tree.ts';
import { NOTHING, UNKNOWN, qualifies, resolve, union, type Context, type Ctes, type Origin, type Scope } from './fields.ts';
import { queryFields } from './queries.ts';

// The origin of an expression's value: every column it refers to, wherever in the expression (function
// arguments, CASE conditions, aggregate FILTER and ORDER BY, window PARTITION BY and ORDER BY), plus every output
// column of any subquery inside it. `count(*)` refers to no column, so it derives from nothing. This counts more
// than strictly flows into the value, which is the safe direction: a source missed is a leak, one too many is a
// mask. Lambda parameters are not columns; the array they range over is counted where it is passed. A star inside
// a call (`f(c.*)`, `f(*)`) passes whole rows: every column of that relation counts, or of every relation in
// scope; only a bare `count(*)` is known to read no value.

export function originOf(expression: unknown, scope: Scope, ctes: Ctes, ctx: Context): Origin {
  const found: Origin[] = [];
  const visit = (n: Node, lambdas: ReadonlySet<string>): void => {
    if (isTerminal(n)) return;
    if (is(n, 'ColumnReference') || is(n, 'ColumnRef')) {
      const name = is(n, 'ColumnReference') ? n.columnName().qualifiedName() : n.qualifiedName();
      const parts = namesOf(name);
      if (parts.length === 0) found.push(UNKNOWN);
      else if (!lambdas.has(parts[0]!)) found.push(resolve(parts, scope));
      return;
    }
    if (is(n, 'Lambda')) {
      visit(n.expression() as unknown as Node, new Set([...lambdas, ...namesOf(n)]));
      return;
    }
    if (is(n, 'QueryStatement')) {
      found.push(union(queryFields(n, ctes, scope, ctx).map((f) => f.origin)));
      return;
    }
    if (is(n, 'Measure')) {
      found.push(UNKNOWN); // a row-pattern measure: defined elsewhere, not traced
      return;
    }
    if (kindOf(n) === 'GroupingOperation') return; // GROUPING(a, b) is a bit mask over the grouping sets
    if (is(n, 'FunctionCall') && n.ASTERISK()) found.push(starArgument(n, scope));
    for (const child of childrenOf(n)) visit(child, lambdas);
  };
  visit(expression as Node, new Set());
  return found.length === 0 ? NOTHING : union(found);
}

function starArgument(call: FunctionCallContext, scope: Scope): Origin {
  const label = call.identifier();
  const name = namesOf(call.functionName().qualifiedName());
  if (!label) return name.length === 1 && name[0] === 'count' ? NOTHING : union(allFields(scope).map((f) => f.origin));
  const prefix = [nameOf(label)];
  for (let s: Scope | undefined = scope; s; s = s.outer) {
    const matched = s.fields.filter((f) => qualifies(f.qualifier, prefix));
    if (matched.length > 0) return union(matched.map((f) => (f.wild ? { ...f.origin, unknown: true } : f.origin)));
  }
  return UNKNOWN;
}

const allFields = (scope: Scope | undefined): Scope['fields'][number][] => (scope ? [...scope.fields, ...allFields(scope.outer)] : []);
