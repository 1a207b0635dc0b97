import { z } from 'zod';

// MLflow's JSON wire: protobuf messages as the official client writes them (snake_case field names, int64 as JSON
// numbers or numeric strings, enums by name or number, doubles as numbers or the strings "NaN", "Infinity",
// "-Infinity"; a GET carries the same message in its query string). These field types parse a message once, at
// the edge, into typed values; wire/request.ts turns a failure into MLflow's words.

// A GET query string gives every field as the list of its values (wire/request.ts); a scalar field takes the last,
// as protobuf does, and a repeated field the whole list. In a JSON body a list where a scalar belongs (or the
// reverse) is refused.
const lastOf = (v: unknown) => (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string') ? v[v.length - 1] : v);
const fromQuery = (v: unknown) => v instanceof QueryValues;

/** The values a query string gives one key. */
export class QueryValues extends Array<string> {}

/** A string field. */
export const str = () => z.preprocess((v) => (fromQuery(v) ? lastOf(v) : v), z.string());

/**
 * A required string: absent, null or empty is "Missing value for required parameter" (protobuf cannot tell an
 * empty string from an absent one, so MLflow treats both as missing).
 */
export const requiredStr = () => str().refine((s) => s !== '', { params: { missing: true } });

/** An optional string whose absence is the empty string (protobuf's default). */
export const strOrEmpty = () =>
  str()
    .optional()
    .transform((v) => v ?? '');

/** An optional string; empty counts as absent. */
export const optionalStr = () =>
  str()
    .optional()
    .transform((s) => (s === '' ? undefined : s));

/** An int64 field: a JSON number or a numeric string (query strings, protobuf's own JSON). */
export const int64 = () =>
  z.preprocess((q) => {
    const v = fromQuery(q) ? lastOf(q) : q;
    return typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v;
  }, z.number().int().refine(Number.isSafeInteger));

/** A double field: a number, or the strings protobuf's JSON uses for the values JSON has no literal for. */
export const double = () =>
  z.preprocess(
    (q) => {
      const v = fromQuery(q) ? lastOf(q) : q;
      if (typeof v !== 'string') return v;
      const s = v.trim();
      if (s === 'NaN') return Number.NaN;
      if (s === 'Infinity' || s === 'inf') return Number.POSITIVE_INFINITY;
      if (s === '-Infinity' || s === '-inf') return Number.NEGATIVE_INFINITY;
      return s !== '' && Number.isFinite(Number(s)) ? Number(s) : v;
    },
    z.custom<number>((v) => typeof v === 'number'),
  );

/** A boolean field: JSON true/false, or 'true'/'false' in any case from a query string. */
export const bool = () =>
  z.preprocess((q) => {
    const v = fromQuery(q) ? lastOf(q) : q;
    return typeof v === 'string' && /^(true|false)$/i.test(v) ? v.toLowerCase() === 'true' : v;
  }, z.boolean());

/** A repeated field (absent is empty). */
export const list = <T extends z.ZodType>(item: T) =>
  z.preprocess((v) => (v === undefined || v === null ? [] : fromQuery(v) ? [...(v as QueryValues)] : v), z.array(item));

/** Ids that travel as strings or numbers (experiment ids in searches). */
export const idList = () => list(z.union([z.string(), z.number()]).transform(String));

/** An enum field, by name or by number as protobuf's JSON allows. */
export function protoEnum<const N extends readonly string[]>(names: Record<number, N[number]>) {
  const byName = new Set(Object.values(names));
  return z.preprocess(
    (q) => {
      const v = fromQuery(q) ? lastOf(q) : q;
      if (typeof v === 'number') return names[v] ?? v;
      if (typeof v === 'string' && /^\d+$/.test(v)) return names[Number(v)] ?? v;
      return v;
    },
    z.string().refine((s) => byName.has(s)),
  ) as unknown as z.ZodType<N[number]>;
}

export const RUN_STATUSES = { 1: 'RUNNING', 2: 'SCHEDULED', 3: 'FINISHED', 4: 'FAILED', 5: 'KILLED' } as const;
export type RunStatus = (typeof RUN_STATUSES)[keyof typeof RUN_STATUSES];
export const runStatus = () => protoEnum<RunStatus[]>(RUN_STATUSES);

export const VIEW_TYPES = { 1: 'ACTIVE_ONLY', 2: 'DELETED_ONLY', 3: 'ALL' } as const;
export type ViewType = (typeof VIEW_TYPES)[keyof typeof VIEW_TYPES];
export const viewType = () => protoEnum<ViewType[]>(VIEW_TYPES);

export type KeyValue = { key: string; value: string };

/** A key/value entry (param, tag): the key is required, an absent value is the empty string. */
export const keyValue = () => z.object({ key: requiredStr(), value: strOrEmpty() });

const withRunId = (v: unknown) => {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  const m = v as { run_id?: unknown; run_uuid?: unknown };
  return { ...m, run_id: m.run_id || m.run_uuid };
};

/** A message about one run: `run_id` (or `run_uuid` from older clients) is required, beside the other fields. */
export const runMessage = <S extends z.ZodRawShape>(shape: S) => z.preprocess(withRunId, z.object({ run_id: requiredStr(), ...shape }));
