import { openPglite } from '../../src/platform/db/index.ts';
import { trackerRegistryContract } from '../support/tracker-registry-contract.ts';

trackerRegistryContract('PGlite', async () => {
  const db = await openPglite({});
  return { db, cleanup: async () => {} };
});
