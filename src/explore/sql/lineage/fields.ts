import type { Defaults } from '../tables.ts';

// The model the lineage walk works on, shaped like Trino's own analyzer: a relation is an ordered list of fields,
// each with an optional name and an optional qualifier (the relation alias, or a table's catalog.schema.table),
// and each carrying its origin: the base-table columns its values come from, or `unknown`.
//
// A "wild" field stands for columns whose number is not known from the text (a table the schema does not list,
// UNNEST without column names, a row expanded with `.*`, a table function). Any name may resolve to it; `*` over
// it yields a column whose position cannot be trusted, so everything after it is treated as untraceable.

export type Origin = { sources: ReadonlySet<string>; unknown: boolean };
export type Wild = { table: string } | 'opaque';
export type Field = { name?: string | undefined; qualifier?: readonly string[] | undefined; origin: Origin; wild?: Wild };
export type Schema = ReadonlyMap<string, readonly string[]>;
export type Ctes = ReadonlyMap<string, readonly Field[]>;
export type Scope = { fields: readonly Field[]; outer: Scope | undefined };
export type Context = { schema: Schema; defaults: Defaults };

export const NOTHING: Origin = { sources: new Set(), unknown: false };
export const UNKNOWN: Origin = { sources: new Set(), unknown: true };

export const sourceKey = (table: string, column: string) => `${table}\u0000${column}`;
export const splitKey = (key: string) => {
  const [table, column] = key.split('\u0000') as [string, string];
  return { table, column };
};

export function union(origins: Iterable<Origin>): Origin {
  const sources = new Set<string>();
  let unknown = false;
  for (const o of origins) {
    for (const s of o.sources) sources.add(s);
    unknown ||= o.unknown;
  }
  return { sources, unknown };
}

export const opaque = (origin: Origin, qualifier?: readonly string[]): Field => ({ origin, wild: 'opaque', qualifier });

/** A field list's width is only known when none of its fields is wild. */
export const isExact = (fields: readonly Field[]) => fields.every((f) => !f.wild);

/** `c` matches qualifier [c]; `customer` and `tiny.customer` match [tpch, tiny, customer] (suffix, as Trino). */
export function qualifies(qualifier: readonly string[] | undefined, prefix: readonly string[]): boolean {
  if (!qualifier || prefix.length > qualifier.length) return false;
  const offset = qualifier.length - prefix.length;
  return prefix.every((p, i) => qualifier[offset + i] === p);
}

/**
 * The origin of a (possibly qualified, possibly dereferenced) name, bound the way Trino binds it: `a.b.c` is first
 * column c of relation a.b, in the innermost scope that has one, then column b of relation a (with field c), then
 * column a (with fields b.c). Several matches of one reading in one scope (an ambiguous name) all count. A match
 * that is only a guess (a table whose columns are not known) counts together with whatever would bind otherwise.
 */
export function resolve(parts: readonly string[], scope: Scope | undefined): Origin {
  const readings: [number, Scope][] = [];
  for (let k = parts.length - 1; k >= 0; k--) for (let s = scope; s; s = s.outer) readings.push([k, s]);
  return bind(parts, readings);
}

function bind(parts: readonly string[], readings: readonly [number, Scope][], guessed: ReadonlySet<Field> = new Set()): Origin {
  for (let i = 0; i < readings.length; i++) {
    const [k, s] = readings[i]!;
    const prefix = parts.slice(0, k);
    const column = parts[k]!;
    const hits: Origin[] = [];
    let guessOnly = true;
    const guesses = new Set(guessed);
    for (const f of s.fields) {
      if (guessed.has(f) || (k > 0 && !qualifies(f.qualifier, prefix))) continue;
      if (f.wild) {
        hits.push(typeof f.wild === 'object' ? { sources: new Set([sourceKey(f.wild.table, column)]), unknown: false } : f.origin);
        guesses.add(f);
      } else if (f.name === column) {
        hits.push(f.origin);
        guessOnly = false;
      }
    }
    if (hits.length === 0) continue;
    if (!guessOnly) return union(hits);
    const otherwise = bind(parts, readings.slice(i + 1), guesses); // a relation already guessed at is not guessed at twice
    return union(otherwise.unknown && otherwise.sources.size === 0 ? hits : [...hits, otherwise]);
  }
  return UNKNOWN;
}

/** `AS t (a, b)`: every field takes the alias as its qualifier, and the column names in order. */
export function aliased(fields: readonly Field[], alias: string | undefined, columns: readonly string[] | undefined): Field[] {
  let out: Field[] = fields.map((f) => ({ ...f, qualifier: alias === undefined ? f.qualifier : [alias] }));
  if (columns) out = renamed(out, columns);
  return out;
}

/**
 * Column names applied in order. When the widths disagree or are not known, no position can be trusted, and each
 * name gets the union of every field's origin: whatever position it really has, its origin is inside that union.
 */
export function renamed(fields: readonly Field[], names: readonly string[]): Field[] {
  if (isExact(fields) && fields.length === names.length) return fields.map((f, i) => ({ ...f, name: names[i] }));
  const all = union(fields.map((f) => f.origin));
  return names.map((name) => ({ name, qualifier: fields[0]?.qualifier, origin: all }));
}

export const unqualified = (fields: readonly Field[]): Field[] => fields.map((f) => ({ ...f, qualifier: undefined }));
