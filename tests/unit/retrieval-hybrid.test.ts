import { openPglite } from '../../src/platform/db/index.ts';
import { retrievalHybridContract } from '../support/retrieval-hybrid-contract.ts';

retrievalHybridContract('PGlite', async () => {
  const db = await openPglite({});
  return { db, cleanup: () => db.close() };
});
