import { tagsOfTable, type CatalogTags, type TableTags } from '../platform/catalog-tags.ts';
import type { Caller } from '../platform/identity.ts';
import type { PolicyEngine } from '../platform/policy/index.ts';
import type { QueryEngine } from './engines/types.ts';
import { isSystemRelation } from './sql/index.ts';

// The catalog: tables and columns as the engine reports them, with descriptions and tags (such as `pii`) from the
// operator's tags file. Search scores table names, descriptions and column names against the question's words.

export type CatalogColumn = { name: string; type: string; tags: string[] };
export type CatalogEntry = { fqn: string; name: string; description: string; columns: CatalogColumn[] };
export async function readCatalog(engine: QueryEngine, catalogs: readonly string[], tags: CatalogTags): Promise<CatalogEntry[]> {
  const byTable = new Map<string, { entry: CatalogEntry; tagged: TableTags[] }>();
  for (const c of await engine.columns(catalogs)) {
    const fqn = `${c.catalog}.${c.schema}.${c.table}`.toLowerCase();
    if (isSystemRelation(fqn)) continue; // never a candidate: no statement may read it
    let table = byTable.get(fqn);
    if (!table) {
      const tagged = tagsOfTable(tags, fqn);
      table = { entry: { fqn, name: c.table, description: tagged.find((t) => t.description)?.description ?? '', columns: [] }, tagged };
      byTable.set(fqn, table);
    }
    const columnTags = new Set(table.tagged.flatMap((t) => t.columns?.[c.column] ?? []));
    table.entry.columns.push({ name: c.column, type: c.type, tags: [...columnTags] });
  }
  return [...byTable.values()].map((t) => t.entry);
}

/** The entries the tables policy opens to the caller, one decision per table; a refusal or an error hides the table. */
export async function openToCaller(policy: PolicyEngine, caller: Caller, entries: readonly CatalogEntry[]): Promise<CatalogEntry[]> {
  const decisions = await Promise.all(
    entries.map((e) => policy.decide('tables', { user: caller.user, roles: caller.roles, table: e.fqn })),
  );
  return entries.filter((_, i) => decisions[i]!.allow);
}

/** Personal-data columns as `catalog.schema.table.column`. */
export function piiColumns(entries: readonly CatalogEntry[]): Set<string> {
  const out = new Set<string>();
  for (const e of entries) for (const c of e.columns) if (c.tags.includes('pii')) out.add(`${e.fqn}.${c.name}`);
  return out;
}

const STOP = new Set([
  'the',
  'a',
  'an',
  'of',
  'per',
  'by',
  'for',
  'in',
  'on',
  'and',
  'or',
  'how',
  'many',
  'much',
  'what',
  'which',
  'is',
  'are',
  'there',
  'top',
  'show',
  'me',
  'list',
  'with',
  'each',
  'to',
  'from',
  'give',
  'all',
]);

export const questionWords = (text: string): string[] =>
  text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1 && !STOP.has(w))
    .map(stem);

const stem = (w: string) => (w.endsWith('ies') ? `${w.slice(0, -3)}y` : w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w);

/** Column words without the TPC-H prefix: `c_acctbal` gives `acctbal`, `o_totalprice` gives `totalprice` and `price`. */
function columnWords(name: string): string[] {
  const parts = name.toLowerCase().split('_');
  const body = parts.length > 1 && parts[0]!.length <= 2 ? parts.slice(1) : parts;
  return [...body, body.join('')].map(stem);
}

const described = (e: CatalogEntry) => (e.description ? 1 : 0);

/** An entry's words, worked out once per catalog read (entries are replaced, never changed, when it is read again). */
type Terms = { table: string; description: Set<string>; columns: string[] };
const termsOf = new WeakMap<CatalogEntry, Terms>();
function terms(entry: CatalogEntry): Terms {
  let t = termsOf.get(entry);
  if (!t) {
    t = {
      table: stem(entry.name.toLowerCase()),
      description: new Set(questionWords(entry.description)),
      columns: [...new Set(entry.columns.flatMap((c) => columnWords(c.name)))],
    };
    termsOf.set(entry, t);
  }
  return t;
}

/**
 * What a question word adds to each entry's score (5 its table's name, else 2 a word of its description, and 1 a
 * column's word), kept per reading of the catalog: questions repeat words, and an entry's words do not change.
 */
const scoresByWord = new WeakMap<readonly CatalogEntry[], Map<string, Uint8Array>>();
const MOST_WORDS_KEPT = 4096;
function wordScores(entries: readonly CatalogEntry[], w: string): Uint8Array {
  let kept = scoresByWord.get(entries);
  if (!kept) scoresByWord.set(entries, (kept = new Map()));
  let scores = kept.get(w);
  if (!scores) {
    scores = new Uint8Array(entries.length);
    for (const [i, entry] of entries.entries()) {
      const { table, description, columns } = terms(entry);
      const named = w === table ? 5 : description.has(w) ? 2 : 0;
      scores[i] = named + (columns.some((cw) => cw === w || (w.length > 3 && cw.includes(w))) ? 1 : 0);
    }
    if (kept.size >= MOST_WORDS_KEPT) kept.clear();
    kept.set(w, scores);
  }
  return scores;
}

export function searchCatalog(entries: readonly CatalogEntry[], q: string, limit = 8): { entry: CatalogEntry; score: number }[] {
  const totals = new Array<number>(entries.length).fill(0);
  for (const w of questionWords(q)) {
    const scores = wordScores(entries, w);
    for (let i = 0; i < totals.length; i++) totals[i]! += scores[i]!;
  }
  const scored = entries.map((entry, i) => ({ entry, score: totals[i]! }));
  return (
    scored
      .filter((s) => s.score > 0)
      // On a tie the tables the operator described come first: a catalog can hold the same table at many scales
      // (tpch.tiny.orders ... tpch.sf100000.orders), and the described one is the one meant for questions.
      .sort((a, b) => b.score - a.score || described(b.entry) - described(a.entry) || a.entry.fqn.localeCompare(b.entry.fqn))
      .slice(0, limit)
  );
}
