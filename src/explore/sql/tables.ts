import { stringIndex } from './parse.ts';
import type { ParsedStatement } from './statement.ts';
import type { TableRefContext, ViewRefContext } from 'dt-sql-parser/dist/lib/trino/TrinoSqlParser';
import { is, nameOf, namesOf, tableRefOf, walk, type Node } from './tree.ts';

// The relations a statement reads by name, for the policy check of every table the model wrote and for the
// statement the engine runs. A CTE name hides a table only where the CTE is visible: inside its own definition
// (unless WITH RECURSIVE) and before it is defined, the same name is the base table, and it is reported.

export type Defaults = { catalog: string; schema: string };
export type TableReference = { written: string; table: string };

/** A name in a FROM clause or after TABLE: a WITH query in scope, or a base table (`catalog.schema.table`). */
export type RelationReference = { ref: TableRefContext | ViewRefContext } & ({ cte: string } | { table: string });

/** Every distinct base table, `catalog.schema.table` in lower case, sorted. */
export function tablesOf(statement: ParsedStatement, defaults: Defaults): string[] {
  return [...new Set(tableReferences(statement, defaults).map((r) => r.table))].sort();
}

/** Each reference to a base table in the order written: the text as written and the qualified name. */
export function tableReferences(statement: ParsedStatement, defaults: Defaults): TableReference[] {
  const at = stringIndex(statement.sql);
  return relationReferences(statement, defaults).flatMap((r) =>
    'table' in r ? [{ written: statement.sql.slice(at(r.ref.start!.start), at(r.ref.stop!.stop + 1)), table: r.table }] : [],
  );
}

/** Each relation named in the statement, in the order written, resolved as Trino resolves it. */
export function relationReferences(statement: ParsedStatement, defaults: Defaults): RelationReference[] {
  const out: RelationReference[] = [];
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
      out.push(parts.length === 1 && ctes.has(parts[0]!) ? { ref, cte: parts[0]! } : { ref, table: qualify(parts, defaults) });
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

/**
 * A relation of the engine's own catalog: Trino's `system` catalog, `information_schema`, `pg_catalog` or a
 * connector's `system` schema in any catalog, and a table format's metadata tables (`orders$files`,
 * `orders$partitions`: Iceberg's hold each file's lowest and highest value of every column). They describe every
 * table, its statistics and its users (pg_stats holds sample values of every column), out of reach of its masks.
 */
export const isSystemRelation = (table: string): boolean => {
  const [catalog, schema, ...name] = table.split('.');
  return (
    catalog === 'system' ||
    schema === 'information_schema' ||
    schema === 'pg_catalog' ||
    schema === 'system' ||
    name.join('.').includes('$')
  );
};
