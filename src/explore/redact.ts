import type { ColumnLineage } from './sql/index.ts';

// Step 8: every value of an output column derived from a personal-data column, or whose origin cannot be traced,
// is replaced. Columns are matched to lineage by position, so when the result and the lineage disagree on the
// number of columns no position can be trusted and every column is masked. `null` stays `null`: it says a value
// is absent, not what it is. The caller decides whether the role bypasses redaction.

export type Redacted = { rows: unknown[][]; maskedColumns: string[] };

export function redactRows(
  columns: readonly (string | { name: string })[],
  rows: readonly (readonly unknown[])[],
  lineage: readonly ColumnLineage[],
  piiColumns: ReadonlySet<string>, // 'catalog.schema.table.column'
  replacement: string,
): Redacted {
  const pii = new Set([...piiColumns].map((c) => c.toLowerCase()));
  const aligned = lineage.length === columns.length;
  const masked = columns.map((_, i) => {
    const l = lineage[i];
    return !aligned || !l || l.unknown || l.sources.some((s) => pii.has(`${s.table}.${s.column}`.toLowerCase()));
  });
  const mask = (row: readonly unknown[]) => row.map((v, i) => ((masked[i] ?? true) && v !== null ? replacement : v));
  return {
    rows: rows.map(mask),
    maskedColumns: columns.flatMap((c, i) => (masked[i] ? [typeof c === 'string' ? c : c.name] : [])),
  };
}
