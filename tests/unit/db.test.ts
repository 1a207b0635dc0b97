import { expect, it } from 'vitest';
import { openPglite, openPostgres } from '../../src/platform/db/index.ts';
import { dbContract } from '../support/db-contract.ts';

dbContract('PGlite', async () => {
  const db = await openPglite({});
  return { db, cleanup: () => db.close() };
});

it('reports an unreachable server as not ready instead of throwing', async () => {
  const db = openPostgres({ host: '127.0.0.1', port: 1, database: 'svc', user: 'svc' });
  expect(await db.ping()).toBe(false);
  await db.close();
});

it('reports a closed embedded database as not ready', async () => {
  const db = await openPglite({});
  expect(await db.ping()).toBe(true);
  await db.close();
  expect(await db.ping()).toBe(false);
});
