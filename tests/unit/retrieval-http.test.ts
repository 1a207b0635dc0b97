import { openPglite } from '../../src/platform/db/index.ts';
import { retrievalContract } from '../support/retrieval-contract.ts';
import { retrievalFormatsContract } from '../support/retrieval-formats-contract.ts';

retrievalContract('PGlite', async () => {
  const db = await openPglite({});
  return { db, cleanup: () => db.close() };
});

retrievalFormatsContract('PGlite', async () => {
  const db = await openPglite({});
  return { db, cleanup: () => db.close() };
});
