import { readdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Database, Sql } from './types.ts';

export type Migration = { id: string; sql: string };

/** The `*.sql` files of a folder, in name order; the file name without `.sql` is the migration id. */
export async function loadMigrations(dir: string | URL): Promise<Migration[]> {
  const base = typeof dir === 'string' ? pathToFileURL(`${resolve(dir)}/`) : new URL(dir.href.replace(/\/?$/, '/'));
  const names = (await readdir(base)).filter((n) => n.endsWith('.sql')).sort();
  return Promise.all(names.map(async (name) => ({ id: name.slice(0, -4), sql: await readFile(new URL(name, base), 'utf8') })));
}

// One lock for every namespace: migrations of different services may touch the same objects (the extension).
const lock = (tx: Sql) => tx.query(`SELECT pg_advisory_xact_lock(hashtext('svc_migrations'))`);

/**
 * Applies the pending migrations of one namespace in order, each in its own transaction with its record, and
 * returns the ids applied. Every write happens under a transaction-level advisory lock, so several processes
 * starting at once (replicas, a CLI next to a service) apply each migration exactly once; a failed migration
 * leaves nothing behind and stops the ones after it.
 */
export async function migrate(db: Database, namespace: string, migrations: Migration[]): Promise<string[]> {
  const ids = migrations.map((m) => m.id);
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate) throw new Error(`migration ${namespace}/${duplicate} is listed twice`);
  await db.transaction(async (tx) => {
    await lock(tx);
    await tx.exec(`CREATE TABLE IF NOT EXISTS svc_migrations (
      namespace text NOT NULL, id text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (namespace, id))`);
  });
  const done = new Set(
    (await db.query<{ id: string }>(`SELECT id FROM svc_migrations WHERE namespace = $1`, [namespace])).map((r) => r.id),
  );
  const applied: string[] = [];
  for (const migration of migrations) {
    if (done.has(migration.id)) continue;
    const ran = await db
      .transaction(async (tx) => {
        await lock(tx);
        // Another process may have applied it since the read above: look again under the lock.
        const seen = await tx.query(`SELECT 1 FROM svc_migrations WHERE namespace = $1 AND id = $2`, [namespace, migration.id]);
        if (seen.length > 0) return false;
        await tx.exec(migration.sql);
        await tx.query(`INSERT INTO svc_migrations (namespace, id) VALUES ($1, $2)`, [namespace, migration.id]);
        return true;
      })
      .catch((err: unknown) => {
        throw new Error(`migration ${namespace}/${migration.id} failed: ${(err as Error).message}`, { cause: err });
      });
    if (ran) applied.push(migration.id);
  }
  return applied;
}
