import type { ParsedStatement } from './statement.ts';
import { qualify, type Defaults } from './tables.ts';
import { is, nameOf, namesOf, tableRefOf, walk, type Node } from './tree.ts';

// How many times the engine scans each base table, for the cost gate's upper bound. Trino inlines a WITH query at
// every reference, so a table inside a CTE is scanned once per reference to that CTE (and to any CTE that reads it).
// Where the count cannot be told from the text the answer is undefined and the engine's EXPLAIN decides: a
// recursive WITH (Trino unrolls it to a depth the text does not show) and a quoted name holding `$` (a hidden
// column such as "$path", or a metadata table such as "orders$partitions", whose size table statistics do not hold).

export type ScanCounts = Map<string, number>;

export function scanCounts(statement: ParsedStatement, defaults: Defaults): ScanCounts | undefined {
  if (statement.tokens.some((t) => t.text?.startsWith('"') && t.text.includes('$'))) return undefined;
  try {
    return countIn(statement.query as unknown as Node, new Map(), defaults);
  } catch (err) {
    if (err === UNCOUNTABLE) return undefined;
    throw err;
  }
}

const UNCOUNTABLE = Symbol('uncountable');

/** The scans below `node`; `ctes` maps each visible WITH name to the scans one reference to it costs. */
function countIn(node: Node, ctes: ReadonlyMap<string, ScanCounts>, defaults: Defaults): ScanCounts {
  const out: ScanCounts = new Map();
  walk(node, (n) => {
    if (is(n, 'QueryStatement')) {
      const visible = new Map(ctes);
      const w = n.with();
      if (w?.KW_RECURSIVE()) throw UNCOUNTABLE;
      for (const named of w?.namedQuery() ?? []) {
        // a WITH query sees only the ones defined before it
        visible.set(nameOf(named.identifier()), countIn(named.query() as unknown as Node, new Map(visible), defaults));
      }
      add(out, countIn(n.queryNoWith() as unknown as Node, visible, defaults));
      return false;
    }
    const ref = tableRefOf(n);
    if (!ref) return undefined;
    const parts = namesOf(ref);
    const cte = parts.length === 1 ? ctes.get(parts[0]!) : undefined;
    add(out, cte ?? new Map([[qualify(parts, defaults), 1]]));
    return undefined;
  });
  return out;
}

function add(into: ScanCounts, from: ScanCounts): void {
  for (const [table, n] of from) into.set(table, (into.get(table) ?? 0) + n);
}
