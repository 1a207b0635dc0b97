import { openPostgres } from '../../src/platform/db/index.ts';
import { freshDatabase } from '../support/pg.ts';
import { retrievalContract } from '../support/retrieval-contract.ts';

retrievalContract('Postgres', async () => {
  const fresh = await freshDatabase('retrieval');
  const db = openPostgres(fresh.cfg);
  return {
    db,
    cleanup: async () => {
      await db.close();
      await fresh.drop();
    },
  };
});
