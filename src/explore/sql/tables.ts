import { stringIndex } from './parse.ts';
import type { ParsedStatement } from './statement.ts';
import type { TableRefContext, ViewRefContext } from 'dt-sql-parser/dist/lib/trino/TrinoSqlParser';
import { is, nameOf, namesOf, tableRefOf, walk, type Node } from './tree.ts';

// The base tables a statement reads, for the policy check of every table the model wrote. A CTE name hides a
// table only where the CTE is visible: inside its own definition (unless WITH RECURSIVE) and before it is
// defined, the same name is the base table, and it is reported.

export type Defaults = { catalog: string; schema: string };
export type TableReference = { written: string; table: string };

/** Every distinct base table, `catalog.schema.table` in lower case, sorted. */
export function tablesOf(statement: ParsedStatement, defaults: Defaults): string[] {
  return [...new Set(tableReferences(statement, defaults).map((r) => r.table))].sort();
}

/** Each reference to a base table in the order written: the text as written and the qualified name. */
export function tableReferences(statement: ParsedStatement, defaults: Defaults): TableReference[] {
  const out: TableReference[] = [];
  const at = stringIndex(statement.sql);
  const record = (ref: TableRefContext | ViewRefContext) => {
    const written = statement.sql.slice(at(ref.start!.start), at(ref.stop!.stop + 1));
    out.push({ written, table: qualify(namesOf(ref), defaults) });
  };
  const visit = (node: Node, ctes: ReadonlySet<string>): void =>
    walk(node, (n) => {
      if (is(n, 'QueryStatement')) {
        const visible = new Set(ctes);
        const w = n.with();
        for (const named of w?.namedQuery() ?? []) {
          const name = nameOf(named.identifier());
          visit(named.query() as unknown as Node, w!.KW_RECURSIVE() ? new Set([...visible, name]) : new Set(visible));
          visible.add(name);
        }
        visit(n.queryNoWith() as unknown as Node, visible);
        return false;
      }
      const ref = tableRefOf(n);
      if (!ref) return undefined;
      const parts = namesOf(ref);
      if (!(parts.length === 1 && ctes.has(parts[0]!))) record(ref);
      return undefined;
    });
  visit(statement.query as unknown as Node, new Set());
  return out;
}

/** `customer` -> `tpch.tiny.customer`, `sf1.customer` -> `tpch.sf1.customer`, three parts as they are. */
export function qualify(parts: readonly string[], defaults: Defaults): string {
  const full =
    parts.length >= 3 ? parts.slice(-3) : parts.length === 2 ? [defaults.catalog, ...parts] : [defaults.catalog, defaults.schema, ...parts];
  return full.map((p) => p.toLowerCase()).join('.');
}
