import { invalidParameter } from '../errors.ts';
import { EXPERIMENT_ID } from '../wire/rules.ts';
import type { Comparison, Value } from './filter.ts';

// What every search shares once a filter is parsed: bound parameters, comparator sets, value checks and the SQL of
// one comparison. Identifiers in SQL come only from fixed tables here; user text always travels as a parameter.

/**
 * How every search statement runs: planned with its values at each call. Prepared once and reused, Postgres settles
 * on a generic plan after five runs, one that guesses a filter's selectivity; measured on 10 000 runs, a generic
 * plan started a metric-ordered search with `params.kind = 'a'` from the params index (5 000 rows, 56 ms) where
 * the plan for the values reads the metric's index in order (2 ms).
 */
export const SEARCH_STATEMENT = { planEachCall: true } as const;

export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

export const NUMERIC_OPS = ['=', '!=', '>', '>=', '<', '<='] as const;
export const STRING_OPS = ['=', '!=', 'LIKE', 'ILIKE'] as const;
export const LIST_OPS = ['IN', 'NOT IN'] as const;

const SQL_OP: Record<string, string> = { '=': '=', '!=': '<>', '>': '>', '>=': '>=', '<': '<', '<=': '<=', LIKE: 'LIKE', ILIKE: 'ILIKE' };

/** Refuses a comparator outside `allowed`, naming what it was used on. */
export function checkOp(c: Comparison, allowed: readonly string[], what: string): void {
  if (!allowed.includes(c.op)) {
    throw invalidParameter(`Invalid comparator '${c.op}' for ${what}: not one of ${allowed.map((o) => `'${o}'`).join(', ')}.`);
  }
}

export function numberValue(value: Value, what: string): number {
  if (value.kind === 'number') return value.value;
  throw invalidParameter(`Expected numeric value type for ${what}. Found ${value.text}`);
}

export function stringValue(value: Value, what: string): string {
  if (value.kind === 'string') return value.value;
  if (value.kind === 'bare') {
    throw invalidParameter(
      `Parameter value is either not quoted or unidentified quote types used for string value ${value.text}. Use either single or double quotes.`,
    );
  }
  throw invalidParameter(`Expected a quoted string value for ${what} (e.g. 'my-value'). Got value ${value.text}`);
}

/**
 * The entry `key` names in one of a search's tables of attributes, or MLflow's refusal naming the valid keys. Only
 * the table's own keys count: `constructor` or `__proto__` is in every object, and is no attribute.
 */
export function attributeNamed<T>(table: Readonly<Record<string, T>>, key: string): T {
  if (Object.hasOwn(table, key)) return table[key]!;
  throw invalidParameter(`Invalid attribute key '${key}' specified. Valid keys are '${Object.keys(table).join("', '")}'`);
}

/** A numeric attribute's comparison: a number, with one of the numeric comparators (MLflow's messages otherwise). */
export function compareNumeric(column: string, key: string, c: Comparison, params: Params): string {
  if (c.value.kind !== 'number') throw invalidParameter(`Expected numeric value type for numeric attribute: ${key}. Found ${c.value.text}`);
  checkOp(c, NUMERIC_OPS, `numeric attribute '${key}'`);
  return compare(column, c.op, c.value.value, params);
}

/** `column <op> value` for a scalar comparison, or `column = ANY(list)` for IN / NOT IN. */
export function compare(column: string, op: string, value: string | number | string[], params: Params): string {
  if (op === 'IN') return `${column} = ANY(${params.add(value)}::text[])`;
  if (op === 'NOT IN') return `NOT (${column} = ANY(${params.add(value)}::text[]))`;
  const sqlOp = SQL_OP[op];
  if (!sqlOp) throw invalidParameter(`Invalid comparator '${op}'.`);
  const param = params.add(value);
  return `${column} ${sqlOp} ${typeof value === 'number' ? `${param}::float8` : param}`;
}

/**
 * A comparison on a stored number that may be NaN (metrics keep NaN as is_nan with value 0): NaN equals nothing
 * and is unequal to everything, as in IEEE arithmetic, so it matches only `!=`.
 */
export function compareMetric(valueColumn: string, nanColumn: string, op: string, value: number, params: Params): string {
  const test = compare(valueColumn, op, value, params);
  return op === '!=' ? `(${nanColumn} OR ${test})` : `(NOT ${nanColumn} AND ${test})`;
}

/**
 * The rows a searched row owns in one table (a run's tags, an experiment's tags...): `from` names the table and its
 * alias, `on` ties it to the searched row, `key` is the key column of a key-value table.
 */
export type ChildRows = { from: string; on: string; key?: string };

/** A filter's test on one row of `rows` (`x.key = $3 AND x.value = $4`); `key` is the key's parameter. */
export type RowTest = { rows: ChildRows; test: string; key?: string };

/**
 * A filter's conditions as SQL, ANDed by the caller: plain ones as they are, and the tests on each table of child
 * rows as one condition. One test is an EXISTS (a semi-join the planner may start from). Several are folded into
 * one scan of the row's children in that table, a `bool_or` per test: Postgres plans each EXISTS as a join of its
 * own, and planning time grew faster than the number of them (on PGlite, 10 metric clauses planned in 0.46 s, 100 in
 * 5 s, 250 in 16.8 s; folded, 100 clauses plan in 10 ms and run in 26 ms over 300 runs).
 */
export function filterConditions(parts: readonly (string | RowTest)[]): string[] {
  const plain: string[] = [];
  const byRows = new Map<ChildRows, RowTest[]>();
  for (const part of parts) {
    if (typeof part === 'string') plain.push(part);
    else byRows.set(part.rows, [...(byRows.get(part.rows) ?? []), part]);
  }
  return [...plain, ...[...byRows].map(([rows, tests]) => everyTest(rows, tests))];
}

function everyTest(rows: ChildRows, tests: RowTest[]): string {
  if (tests.length === 1) return `EXISTS (SELECT 1 FROM ${rows.from} WHERE ${rows.on} AND ${tests[0]!.test})`;
  const keys = tests.map((t) => t.key);
  // Only the rows of the keys named: a run with a thousand metrics reads the few the filter is about.
  const narrow = rows.key && keys.every((k) => k !== undefined) ? ` AND ${rows.key} = ANY(ARRAY[${keys.join(', ')}]::text[])` : '';
  return `(SELECT ${tests.map((t) => `bool_or(${t.test})`).join(' AND ')} FROM ${rows.from} WHERE ${rows.on}${narrow})`;
}

/** A duplicate order_by field is refused, as MLflow does. */
export function checkDistinct(keys: string[], orderBy: readonly unknown[]): void {
  const seen = new Set<string>();
  for (const key of keys) {
    if (seen.has(key)) throw invalidParameter(`\`order_by\` contains duplicate fields: ${JSON.stringify(orderBy)}`);
    seen.add(key);
  }
}

/** Blank order_by entries (an empty query-string value) are ignored. */
export const orderEntries = (orderBy: readonly string[] | undefined): string[] => (orderBy ?? []).filter((o) => o.trim() !== '');

/** Experiment ids of a search, as the integers they must be. */
export function experimentIdsOf(ids: string[]): number[] {
  return ids.map((id) => {
    if (!EXPERIMENT_ID.test(String(id).trim())) throw invalidParameter(`Invalid experiment id '${id}': experiment ids are integers.`);
    return Number(id);
  });
}
