import { openPglite } from '../../src/platform/db/index.ts';
import { trackerWorkspacesContract } from '../support/tracker-workspaces-contract.ts';

trackerWorkspacesContract('PGlite', async () => ({ db: await openPglite({}), cleanup: async () => {} }));
