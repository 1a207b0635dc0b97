import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadMigrations, openDatabase, openPglite, openPostgres } from '../../src/platform/db/index.ts';
import { dbContract } from '../support/db-contract.ts';

dbContract('PGlite in a worker thread', async () => {
  const db = await openPglite({});
  return { db, cleanup: () => db.close() };
});

dbContract('PGlite on the calling thread', async () => {
  const db = await openPglite({ inWorker: false });
  return { db, cleanup: () => db.close() };
});

/** A loopback port that nothing listens on: bound by us, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('SQL port outside the contract', () => {
  it('reports an unreachable Postgres as not ready instead of throwing', async () => {
    const db = openPostgres({ host: '127.0.0.1', port: await closedPort(), database: 'svc', user: 'svc', password: 'x' });
    expect(await db.ping()).toBe(false);
    await expect(db.query('SELECT 1')).rejects.toThrow(/ECONNREFUSED/);
    await db.close();
    expect(await db.ping()).toBe(false);
  });

  it('loads *.sql migrations in name order from a path or a URL', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-migrations-'));
    try {
      await writeFile(join(dir, '010_later.sql'), 'SELECT 10;');
      await writeFile(join(dir, '002_first.sql'), 'SELECT 2;');
      await writeFile(join(dir, 'notes.md'), 'not a migration');
      const expected = [
        { id: '002_first', sql: 'SELECT 2;' },
        { id: '010_later', sql: 'SELECT 10;' },
      ];
      expect(await loadMigrations(dir)).toEqual(expected);
      expect(await loadMigrations(pathToFileURL(dir))).toEqual(expected);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('opens embedded PGlite in DATA_DIR/pglite with the platform schema, and keeps data across restarts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-data-'));
    const cfg = { PG_PORT: 5432, PG_DATABASE: 'svc', PG_USER: 'svc', DATA_DIR: dir };
    try {
      const first = await openDatabase(cfg);
      expect(first.kind).toBe('pglite');
      await first.exec('CREATE TABLE kept (x int); INSERT INTO kept VALUES (42);');
      await first.close();
      const again = await openDatabase(cfg);
      expect(await again.query('SELECT x FROM kept')).toEqual([{ x: 42 }]);
      expect(await again.query(`SELECT id FROM svc_migrations WHERE namespace = 'platform'`)).toEqual([{ id: '001_vector' }]);
      await again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
