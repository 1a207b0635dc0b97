// A database error's SQLSTATE, read without a driver: the HTTP error mapping (http.ts) uses it, and the dashboards
// runtime, which opens no database, must not load the database port to get it.

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

/**
 * A statement that ran past its time limit (57014 query_canceled, Postgres's statement_timeout and embedded PGlite's
 * limit alike) or a database too busy to take one (57P03: embedded PGlite still finishing such a statement): the
 * request may succeed later, so the services answer 503 rather than 500.
 */
export const isDatabaseBusy = (err: unknown): boolean => ['57014', '57P03'].includes(sqlState(err) ?? '');
