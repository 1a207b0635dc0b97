import type { OutputLineage } from './sql/lineage.ts';

// Step 8: every output column derived from a personal-data column (or whose origin cannot be traced) is replaced
// by the redaction string, unless the caller holds a bypass role. The same rows are stored in the dashboard.
export type Redaction = { rows: unknown[][]; maskedColumns: string[] };

export function redactRows(
  rows: readonly unknown[][],
  lineage: readonly OutputLineage[],
  opts: { pii: ReadonlySet<string>; replacement: string; bypass: boolean },
): Redaction {
  if (opts.bypass) return { rows: rows as unknown[][], maskedColumns: [] };
  const masked = lineage.map((c) => c.unknown || c.sources.some((s) => opts.pii.has(s)));
  // a result wider than its traced lineage is masked beyond it too: fail closed
  const width = rows[0]?.length ?? lineage.length;
  for (let i = lineage.length; i < width; i++) masked[i] = true;
  if (!masked.some(Boolean)) return { rows: rows as unknown[][], maskedColumns: [] };
  return {
    rows: rows.map((row) => row.map((value, i) => (masked[i] && value !== null ? opts.replacement : value))),
    maskedColumns: masked.flatMap((m, i) => (m ? [lineage[i]?.name ?? `_col${i}`] : [])),
  };
}

export const bypassesRedaction = (roles: readonly string[], bypassRoles: readonly string[]) =>
  roles.some((r) => bypassRoles.includes(r));
