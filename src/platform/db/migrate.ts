import { readdir, readFile } from 'node:fs/promises';
import type { Database } from './types.ts';

export type Migration = { id: string; sql: string };

/** The `*.sql` files of a folder, in name order; the file name (without .sql) is the migration id. */
export async function loadMigrations(dir: string | URL): Promise<Migration[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.sql')).sort();
  const base = typeof dir === 'string' ? dir.replace(/\/?$/, '/') : dir;
  return Promise.all(
    names.map(async (name) => ({
      id: name.replace(/\.sql$/, ''),
      sql: await readFile(typeof base === 'string' ? base + name : new URL(name, base), 'utf8'),
    })),
  );
}

/**
 * Applies the pending migrations of one namespace, each in its own transaction with its record. A transaction-level
 * advisory lock serialises concurrent migrators (several replicas starting at once) on a real server.
 */
export async function migrate(db: Database, namespace: string, migrations: Migration[]): Promise<string[]> {
  await db.exec(`CREATE TABLE IF NOT EXISTS svc_migrations (
    namespace text NOT NULL, id text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, id))`);
  const applied: string[] = [];
  for (const migration of migrations) {
    const done = await db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('svc_migrations'))`);
      const seen = await tx.query(`SELECT 1 FROM svc_migrations WHERE namespace = $1 AND id = $2`, [namespace, migration.id]);
      if (seen.length > 0) return false;
      await tx.exec(migration.sql);
      await tx.query(`INSERT INTO svc_migrations (namespace, id) VALUES ($1, $2)`, [namespace, migration.id]);
      return true;
    });
    if (done) applied.push(migration.id);
  }
  return applied;
}
