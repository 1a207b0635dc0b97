import { type CatalogEntry, piiColumns } from './catalog.ts';
import { LAKE_COLUMNS } from './sql/semantic.ts';
import {
  type ColumnLineage,
  engineStatement,
  ensureLimit,
  outputLineage,
  type ParsedStatement,
  scanCounts,
  type ScanCounts,
  tablesOf,
} from './sql/index.ts';

// What the pipeline derives from a statement and a reading of the catalog, kept with them between requests: the same
// text gives the same statement (sql/statement.ts), and a new reading of the catalog is a new array. The policy's
// decisions are never kept here: they are taken for every request.

type Defaults = Parameters<typeof tablesOf>[1];
type EngineOptions = Parameters<typeof engineStatement>[1];

// step 5: its tables and its engine text depend on nothing else (the masks are one object per catalog read and
// redaction setting)
const derived = new WeakMap<
  ParsedStatement,
  { tables: readonly string[]; engine?: { options: EngineOptions; sql: string }; limited?: { limit: number; sql: string } }
>();
// step 6: how often it scans each table (sql/scans.ts), for one defaults object; undefined (uncountable) is kept too
const scans = new WeakMap<ParsedStatement, { defaults: Defaults; counts: ScanCounts | undefined }>();

/** The tables `statement` reads, unqualified names resolved by `defaults` (one defaults object per process). */
export function tablesRead(statement: ParsedStatement, defaults: Defaults): string[] {
  let kept = derived.get(statement);
  if (!kept) derived.set(statement, (kept = { tables: tablesOf(statement, defaults) }));
  return [...kept.tables];
}

/** How many times the engine scans each table `statement` reads (scanCounts'); the caller must not change the map. */
export function scansOf(statement: ParsedStatement, defaults: Defaults): ReadonlyMap<string, number> | undefined {
  const kept = scans.get(statement);
  if (kept?.defaults === defaults) return kept.counts;
  const counts = scanCounts(statement, defaults);
  scans.set(statement, { defaults, counts });
  return counts;
}

/** The statement as the caller reads it, with its LIMIT (ensureLimit's), kept for the last limit. */
export function limitedText(statement: ParsedStatement, limit: number): string {
  const kept = derived.get(statement);
  if (kept?.limited?.limit === limit) return kept.limited.sql;
  const sql = ensureLimit(statement.sql, statement, limit);
  if (kept) kept.limited = { limit, sql };
  return sql;
}

/** The text the engine runs for `statement`, masks applied: engineStatement's, kept for the last options. */
export function engineText(statement: ParsedStatement, options: EngineOptions): string {
  const kept = derived.get(statement);
  const last = kept?.engine?.options;
  if (last && (Object.keys(options) as (keyof EngineOptions)[]).every((k) => last[k] === options[k])) return kept.engine!.sql;
  const sql = engineStatement(statement, options);
  if (kept) kept.engine = { options, sql };
  return sql;
}

// step 8: a statement's lineage over one reading of the catalog. Lake tables are not in the catalog yet, so a
// statement that joins them is traced each time.
const lineages = new WeakMap<ParsedStatement, { entries: CatalogEntry[]; lineage: ColumnLineage[] }>();
const piiOfCatalog = new WeakMap<CatalogEntry[], Set<string>>();

/** Where each output column of `statement` comes from, over the catalog's `entries` and the lake tables it joins. */
export function lineageOf(statement: ParsedStatement, lakeTables: string[], entries: CatalogEntry[], defaults: Defaults): ColumnLineage[] {
  const kept = lineages.get(statement);
  if (kept?.entries === entries && lakeTables.length === 0) return kept.lineage;
  const schema = Object.fromEntries([
    ...lakeTables.map((t) => [t, LAKE_COLUMNS] as const), // until the catalog lists them
    ...entries.map((e) => [e.fqn, e.columns.map((c) => c.name)] as const),
  ]);
  // The added LIMIT does not change which columns come from where, so the validated statement's lineage holds.
  const lineage = outputLineage(statement, schema, defaults);
  if (lakeTables.length === 0) lineages.set(statement, { entries, lineage });
  return lineage;
}

/** The personal-data columns of one reading of the catalog. */
export function piiOf(entries: CatalogEntry[]): Set<string> {
  let pii = piiOfCatalog.get(entries);
  if (!pii) piiOfCatalog.set(entries, (pii = piiColumns(entries)));
  return pii;
}
