import { openPglite } from '../../src/platform/db/index.ts';
import { auditChainContract } from '../support/audit-contract.ts';

auditChainContract('PGlite', async () => {
  const db = await openPglite();
  return { db, cleanup: () => db.close() };
});
