import { openPostgres } from '../../src/platform/db/index.ts';
import { freshDatabase } from '../support/pg.ts';
import { retrievalContract } from '../support/retrieval-contract.ts';
import { retrievalFormatsContract } from '../support/retrieval-formats-contract.ts';

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

retrievalFormatsContract('Postgres', async () => {
  const fresh = await freshDatabase('formats');
  const db = openPostgres(fresh.cfg);
  return {
    db,
    cleanup: async () => {
      await db.close();
      await fresh.drop();
    },
  };
});
