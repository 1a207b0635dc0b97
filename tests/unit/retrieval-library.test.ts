import { openPglite } from '../../src/platform/db/index.ts';
import { retrievalLibraryContract } from '../support/retrieval-library-contract.ts';

retrievalLibraryContract('PGlite', async () => {
  const db = await openPglite({});
  return { db, cleanup: () => db.close() };
});
