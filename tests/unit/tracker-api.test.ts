import { openPglite } from '../../src/platform/db/index.ts';
import { trackerApiContract } from '../support/tracker-api-contract.ts';

trackerApiContract('PGlite', async () => {
  const db = await openPglite({});
  return { db, cleanup: async () => {} };
});
