import type { MiddlewareHandler } from 'hono';
import { loadMigrations, migrate, migratePlatform, type Database, type Migration, type Sql } from '../platform/db/index.ts';
import type { AppEnv } from '../platform/http.ts';
import { permissionDenied } from './errors.ts';
import { backfillRunJson } from './runs/load.ts';

export const UPGRADE_COMMAND = 'svc tracker db upgrade';

/** The tracker migrations this build ships, in order. */
export const trackerMigrations = (): Promise<Migration[]> => loadMigrations(new URL('./migrations/', import.meta.url));

/**
 * Applies the platform and tracker migrations, then stores the JSON of runs that have none (written before
 * migration 011; a few hundred at a time, so a live server's writes to those runs wait at most one batch); the ids
 * applied.
 */
export async function upgradeTrackerSchema(db: Database): Promise<string[]> {
  const applied = [...(await migratePlatform(db)), ...(await migrate(db, 'tracker', await trackerMigrations()))];
  while ((await backfillRunJson(db, 500)) > 0);
  return applied;
}

/** Ids this build ships that the database has not applied (all of them when nothing was ever applied). */
export async function pendingTrackerMigrations(db: Sql, shipped: Migration[]): Promise<string[]> {
  const table = await db.query<{ t: string | null }>(`SELECT to_regclass('svc_migrations')::text AS t`);
  if (!table[0]?.t) return shipped.map((m) => m.id);
  const done = new Set((await db.query<{ id: string }>(`SELECT id FROM svc_migrations WHERE namespace = 'tracker'`)).map((r) => r.id));
  return shipped.map((m) => m.id).filter((id) => !done.has(id));
}

/**
 * Whether the server may write. A server facing an older schema stays up for reads and refuses writes with
 * PERMISSION_DENIED naming the upgrade command; once someone runs it, the next write finds the schema current.
 */
export type SchemaGate = { pending(): Promise<string[]> };

export function openSchemaGate(): SchemaGate {
  return { pending: async () => [] };
}

export function createSchemaGate(db: Sql, shipped: Migration[], pendingAtStart: string[]): SchemaGate {
  let pending = pendingAtStart;
  return {
    async pending() {
      // Only a server that was behind asks again (one small query per refused write); current stays current.
      if (pending.length > 0) pending = await pendingTrackerMigrations(db, shipped);
      return pending;
    },
  };
}

// MLflow reads that travel as POST (search bodies can be long); every other POST, PATCH, PUT and DELETE writes.
const READ_POSTS = [
  '/runs/search',
  '/experiments/search',
  '/logged-models/search',
  '/registered-models/get-latest-versions',
  '/model-versions/search',
  '/registered-models/search',
  '/experiments/search-datasets',
  '/traces/search',
  '/datasets/search',
  '/metrics/get-history-bulk-interval',
];

export function isReadRequest(method: string, path: string): boolean {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return true;
  return method === 'POST' && READ_POSTS.some((p) => path.endsWith(p));
}

export function schemaGateMiddleware(gate: SchemaGate): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!isReadRequest(c.req.method, c.req.path)) {
      const pending = await gate.pending();
      if (pending.length > 0) {
        throw permissionDenied(
          `The tracker database schema is older than this server (pending migrations: ${pending.join(', ')}); ` +
            `the server is read-only until an operator runs '${UPGRADE_COMMAND}'.`,
        );
      }
    }
    await next();
  };
}
