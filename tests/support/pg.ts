import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { openPostgres, type Database, type PgConnection } from '../../src/platform/db/index.ts';

// The real PostgreSQL of scripts/start-postgres.sh on loopback (settings from SVC_PG_*, defaults as the script's).
// Each test file gets a database of its own, so tests never see each other's rows.
export function realPgConfig(database = process.env.SVC_PG_DATABASE || 'svc'): PgConnection {
  return {
    host: process.env.SVC_PG_HOST || '127.0.0.1',
    port: Number(process.env.SVC_PG_PORT || 55432),
    user: process.env.SVC_PG_USER || 'svc',
    password: process.env.SVC_PG_PASSWORD || 'svc',
    database,
  };
}

async function withAdmin<T>(fn: (admin: Database) => Promise<T>): Promise<T> {
  const admin = openPostgres({ ...realPgConfig('postgres'), max: 1 });
  try {
    return await fn(admin);
  } finally {
    await admin.close();
  }
}

const startScript = new URL('../../scripts/start-postgres.sh', import.meta.url);
let up: Promise<void> | undefined;
/** Starts the loopback server with the project's script unless it already answers (once per test process). */
export function ensurePostgres(): Promise<void> {
  up ??= (async () => {
    const cfg = realPgConfig();
    if (await withAdmin((admin) => admin.ping())) return;
    if (!['127.0.0.1', 'localhost'].includes(cfg.host)) throw new Error(`PostgreSQL at ${cfg.host}:${cfg.port} does not answer`);
    execFileSync('bash', [fileURLToPath(startScript), String(cfg.port)], { stdio: ['ignore', 'ignore', 'inherit'] });
  })();
  return up;
}

/** A new, empty database on the real server (named after `prefix`); drop() removes it even with open sessions. */
export async function freshDatabase(prefix: string): Promise<{ cfg: PgConnection; drop(): Promise<void> }> {
  await ensurePostgres();
  const name = `t_${prefix.toLowerCase().replace(/\W/g, '_').slice(0, 30)}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await withAdmin((admin) => admin.exec(`CREATE DATABASE ${name}`));
  return {
    cfg: realPgConfig(name),
    drop: () => withAdmin((admin) => admin.exec(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

/** A fresh database opened through the Postgres adapter; cleanup() closes it and drops the database. */
export async function openFreshPostgres(prefix: string): Promise<{ db: Database; cleanup(): Promise<void> }> {
  const fresh = await freshDatabase(prefix);
  const db = openPostgres(fresh.cfg);
  return {
    db,
    cleanup: async () => {
      await db.close();
      await fresh.drop();
    },
  };
}
