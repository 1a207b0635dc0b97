import { isDatabaseBusy, sqlState } from '../platform/db/index.ts';
import { TrackerError } from './errors.ts';

/**
 * A database refusal caused by the request (a value Postgres cannot store, such as a NUL character in text) is the
 * caller's INVALID_PARAMETER_VALUE, never a 500 the client would retry; a transient conflict (deadlock,
 * serialization failure, too many connections, a lost connection) is TEMPORARILY_UNAVAILABLE, which the client
 * retries.
 */
const CONNECTION = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

export function fromDatabaseError(err: unknown): unknown {
  const state = sqlState(err);
  const code = (err as { code?: unknown } | null)?.code;
  if (!state && typeof code === 'string' && CONNECTION.has(code)) {
    return new TrackerError('TEMPORARILY_UNAVAILABLE', 'The database cannot be reached right now; try again.');
  }
  if (!state) return err;
  const detail = (err as Error).message;
  if (state.startsWith('22')) return new TrackerError('INVALID_PARAMETER_VALUE', `Invalid value in the request: ${detail}`);
  if (state === '23503')
    return new TrackerError('INVALID_PARAMETER_VALUE', `The request refers to something that does not exist: ${detail}`);
  // 57014 and 57P03: a statement past its time limit (SVC_DB_STATEMENT_TIMEOUT_MS), or embedded PGlite still running one
  if (state === '40001' || state === '40P01' || state === '53300' || state === '55P03' || isDatabaseBusy(err)) {
    return new TrackerError('TEMPORARILY_UNAVAILABLE', `The database is busy (${detail}); try again.`);
  }
  return err;
}
