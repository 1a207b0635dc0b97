import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openPostgres, type Database, type PgConnection } from '../../src/platform/db/index.ts';

// The real PostgreSQL that scripts/start-postgres.sh runs on loopback. Each test file gets a database of its own.
export function realPgConfig(database = 'svc'): PgConnection {
  return {
    host: process.env.SVC_IT_PG_HOST ?? '127.0.0.1',
    port: Number(process.env.SVC_IT_PG_PORT ?? 55432),
    user: process.env.SVC_IT_PG_USER ?? 'svc',
    password: process.env.SVC_IT_PG_PASSWORD ?? 'svc',
    database,
  };
}

let started = false;
export function ensurePostgres(): void {
  if (started) return;
  execFileSync('bash', ['scripts/start-postgres.sh'], { stdio: 'inherit' });
  started = true;
}

export async function freshDatabase(prefix: string): Promise<{ cfg: PgConnection; drop(): Promise<void> }> {
  ensurePostgres();
  const name = `t_${prefix.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
  const admin = openPostgres({ ...realPgConfig('postgres'), max: 1 });
  try {
    await admin.exec(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  return {
    cfg: realPgConfig(name),
    async drop() {
      const admin = openPostgres({ ...realPgConfig('postgres'), max: 1 });
      try {
        await admin.exec(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.close();
      }
    },
  };
}

/** A fresh database on the real server, opened through the Postgres adapter; cleanup closes and drops it. */
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
