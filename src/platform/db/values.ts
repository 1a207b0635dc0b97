// Text-format parsers both adapters install, so the same SQL yields the same JavaScript values (see types.ts).

/** Type OIDs from pg_type, fixed across PostgreSQL versions. */
export const OID = { bytea: 17, int8: 20, json: 114, timestamp: 1114, numeric: 1700, jsonb: 3802 } as const;

export const parseInt8 = (text: string): number | bigint => {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
};

export const parseNumeric = (text: string): number => Number(text);

/** A timestamp without time zone is wall-clock time in UTC (the session zone), whatever the Node process zone. */
export const parseTimestamp = (text: string): Date => new Date(`${text.replace(' ', 'T')}Z`);

/** bytea text output is hex (`\x0102`); a copy in a plain Uint8Array, not a pooled Buffer. */
export const parseBytea = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.slice(2), 'hex'));

/** JSON parameters arrive as JSON text (the port's convention); an object is stringified, as PGlite does. */
export const serializeJson = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * The SQLSTATE of a database error (`23505` unique violation, `23503` foreign key, `40P01` deadlock, ...), or
 * undefined for anything else. Both drivers put it in `code`; Node's socket errors have a code but no severity.
 */
export function sqlState(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, severity } = err as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && typeof severity === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export const isUniqueViolation = (err: unknown): boolean => sqlState(err) === '23505';
