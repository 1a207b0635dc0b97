import { join } from 'node:path';
import { loadMigrations, migrate } from './migrate.ts';
import { openPostgres } from './postgres.ts';
import { DEFAULT_STATEMENT_TIMEOUT_MS } from './timeout.ts';
import type { Database } from './types.ts';

export { loadMigrations, migrate, type Migration } from './migrate.ts';
export { openPostgres } from './postgres.ts';
export { DEFAULT_STATEMENT_TIMEOUT_MS } from './timeout.ts';
export {
  copyFloat8,
  copyInput,
  copyInt4,
  copyInt8,
  copyInt8At,
  createCopyDecoder,
  createCopyTupleDecoder,
  int4Field,
  readCopyRows,
  readCopyTuples,
  textField,
  uuidField,
  type CopyField,
  type CopyTuples,
} from './copy.ts';
export { sqlLiteral, toVector, type CopyOutOptions, type Database, type PgConnection, type QueryOptions, type Sql } from './types.ts';
export { isDatabaseBusy, isUniqueViolation, sqlState } from './values.ts';

export type PgliteOptions = {
  /** The data folder; in memory when unset. */
  dataDir?: string | undefined;
  /**
   * In a worker thread (the default, and what the services run): a slow statement holds the worker, never the
   * thread that answers HTTP. `false` runs PGlite on the caller's thread (no time limit): for tools and tests only.
   */
  inWorker?: boolean;
  /** The time limit of every statement in the worker; DEFAULT_STATEMENT_TIMEOUT_MS when unset. Not on the caller's thread. */
  statementTimeoutMs?: number | undefined;
};

/**
 * Embedded PGlite, loaded on first use: its WASM runtime costs tens of megabytes of memory that a service on
 * Postgres never needs.
 */
/** PGlite's wasm modules compiled once for this process, for another worker's PGlite.create (pgliteWasmModule, initdbWasmModule). */
export async function compiledPgliteWasm(): Promise<{ pgliteWasmModule: WebAssembly.Module; initdbWasmModule: WebAssembly.Module }> {
  return (await import('./pglite-threaded.ts')).compiledWasm();
}

export async function openPglite(opts: PgliteOptions = {}): Promise<Database> {
  if (opts.inWorker === false) return (await import('./pglite.ts')).openPglite(opts);
  return (await import('./pglite-threaded.ts')).openPgliteInWorker(opts);
}

export type DatabaseSettings = {
  PG_HOST?: string | undefined;
  PG_PORT: number;
  PG_DATABASE: string;
  PG_USER: string;
  PG_PASSWORD?: string | undefined;
  DATA_DIR: string;
  /** Every statement's time limit; DEFAULT_STATEMENT_TIMEOUT_MS when unset. */
  DB_STATEMENT_TIMEOUT_MS?: number | undefined;
};

/**
 * Postgres when PG_HOST is set, else embedded PGlite in DATA_DIR/pglite (in memory with `inMemory`), with the
 * platform migrations applied. The services apply their own namespaces on top.
 */
export async function openDatabase(cfg: DatabaseSettings, opts: { inMemory?: boolean } = {}): Promise<Database> {
  const statementTimeoutMs = cfg.DB_STATEMENT_TIMEOUT_MS ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const db = cfg.PG_HOST
    ? openPostgres({
        host: cfg.PG_HOST,
        port: cfg.PG_PORT,
        database: cfg.PG_DATABASE,
        user: cfg.PG_USER,
        password: cfg.PG_PASSWORD,
        statementTimeoutMs,
      })
    : await openPglite({ dataDir: opts.inMemory ? undefined : join(cfg.DATA_DIR, 'pglite'), statementTimeoutMs });
  try {
    await migratePlatform(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/**
 * The platform namespaces: the vector extension every service relies on, the audit chain, the usage limits, sessions,
 * and the registry of embedded columns (retrieval writes it, explore reads it).
 */
export async function migratePlatform(db: Database): Promise<string[]> {
  return [
    ...(await migrate(db, 'platform', await loadMigrations(new URL('./migrations/', import.meta.url)))),
    ...(await migrate(db, 'audit', await loadMigrations(new URL('../audit/migrations/', import.meta.url)))).map((id) => `audit/${id}`),
    ...(await migrate(db, 'limits', await loadMigrations(new URL('../limits/migrations/', import.meta.url)))).map((id) => `limits/${id}`),
    ...(await migrate(db, 'sessions', await loadMigrations(new URL('../sessions/migrations/', import.meta.url)))).map(
      (id) => `sessions/${id}`,
    ),
    ...(await migrate(db, 'embedded_columns', await loadMigrations(new URL('../embedded-columns/migrations/', import.meta.url)))).map(
      (id) => `embedded_columns/${id}`,
    ),
  ];
}
