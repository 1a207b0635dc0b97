import { openPostgres } from '../../src/platform/db/index.ts';
import { dbContract } from '../support/db-contract.ts';
import { freshDatabase } from '../support/pg.ts';

dbContract('Postgres', async () => {
  const fresh = await freshDatabase('db');
  const db = openPostgres(fresh.cfg);
  return {
    db,
    cleanup: async () => {
      await db.close();
      await fresh.drop();
    },
  };
});
