import { readFile } from 'node:fs/promises';

// The operator's tags of tables and columns (SVC_CATALOG_TAGS_FILE): descriptions for explore's catalog search, and
// `pii` on the columns that hold personal data. Explore masks those for callers without a bypass role; retrieval's
// imports refuse to embed them for such callers. One file, read by both services.

export type CatalogTags = { tables: Record<string, { description?: string; columns?: Record<string, string[]> }> };
export type TableTags = CatalogTags['tables'][string];

export const DEFAULT_TAGS_FILE = new URL('./catalog-tags.json', import.meta.url);

export async function loadCatalogTags(path: string | URL = DEFAULT_TAGS_FILE): Promise<CatalogTags> {
  const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<CatalogTags>;
  if (!parsed || typeof parsed.tables !== 'object') throw new Error(`catalog tags file ${String(path)} has no "tables" object`);
  return { tables: parsed.tables };
}

/**
 * Every key of the tags file that names this table, most specific first. A `*` segment matches any catalog, schema
 * or table, so `tpch.*.customer` tags the personal columns of that table at every scale the engine holds: a
 * schema nobody listed must not escape redaction. Column tags of all matching keys add up.
 */
export function tagsOfTable(tags: CatalogTags, fqn: string): TableTags[] {
  const parts = fqn.toLowerCase().split('.');
  return Object.entries(tags.tables)
    .map(([key, value]) => ({ segments: key.toLowerCase().split('.'), value }))
    .filter(({ segments }) => segments.length === 3 && segments.every((s, i) => s === '*' || s === parts[i]))
    .sort((a, b) => a.segments.filter((s) => s === '*').length - b.segments.filter((s) => s === '*').length)
    .map(({ value }) => value);
}

/** The columns of a table tagged `pii`, lowercase. */
export function personalColumnsOf(tags: CatalogTags, fqn: string): string[] {
  const out = new Set<string>();
  for (const t of tagsOfTable(tags, fqn))
    for (const [column, list] of Object.entries(t.columns ?? {})) if (list.includes('pii')) out.add(column.toLowerCase());
  return [...out];
}

/** Whether one of the caller's roles sees personal data unmasked (SVC_PII_BYPASS_ROLES). */
export const bypassesRedaction = (roles: readonly string[], bypassRoles: readonly string[]) => roles.some((r) => bypassRoles.includes(r));
