import type { ParsedStatement } from '../statement.ts';
import type { Defaults } from '../tables.ts';
import { splitKey, type Schema } from './fields.ts';
import { queryFields } from './queries.ts';

// Column lineage for redaction (step 8): for each output column of a validated statement, in order and named as
// Trino names it, the base-table columns its values derive from. It over-approximates on purpose (an ambiguous
// name counts every table that has it; a condition inside an expression counts), because a source missed is a
// leak and one too many is only a mask. What it cannot trace is `unknown: true`, which redaction masks.

export type ColumnSource = { table: string; column: string };
export type ColumnLineage = { name: string; sources: ColumnSource[]; unknown: boolean };
export type TableColumns = { readonly [table: string]: readonly string[] }; // 'catalog.schema.table' -> column names

export function outputLineage(statement: ParsedStatement, schema: TableColumns, defaults: Defaults): ColumnLineage[] {
  const tables: Schema = new Map(Object.entries(schema).map(([t, cs]) => [t.toLowerCase(), cs.map((c) => c.toLowerCase())]));
  const ctx = { schema: tables, defaults: { catalog: defaults.catalog.toLowerCase(), schema: defaults.schema.toLowerCase() } };
  const fields = statement.query.withFunction() ? [] : queryFields(statement.query.query(), new Map(), undefined, ctx);
  return fields.map((f, i) => ({
    name: f.name ?? `_col${i}`,
    sources: [...f.origin.sources].sort().map(splitKey),
    // a wild field stands for an unknown number of columns: its position, and every later one, cannot be trusted
    unknown: f.origin.unknown || !!f.wild || fields.slice(0, i).some((g) => g.wild),
  }));
}
