import { expect, it } from 'vitest';
import { openDatabase } from '../../src/platform/db/index.ts';
import { dbContract } from '../support/db-contract.ts';
import { freshDatabase, openFreshPostgres } from '../support/pg.ts';

dbContract('Postgres', () => openFreshPostgres('db'));

it('openDatabase selects Postgres when PG_HOST is set and applies the platform schema', async () => {
  const fresh = await freshDatabase('db_open');
  const { host, port, database, user, password } = fresh.cfg;
  const db = await openDatabase({
    PG_HOST: host,
    PG_PORT: port,
    PG_DATABASE: database,
    PG_USER: user,
    PG_PASSWORD: password,
    DATA_DIR: '/nonexistent',
  });
  try {
    expect(db.kind).toBe('postgres');
    expect(await db.query(`SELECT extname FROM pg_extension WHERE extname = 'vector'`)).toEqual([{ extname: 'vector' }]);
  } finally {
    await db.close();
    await fresh.drop();
  }
});
