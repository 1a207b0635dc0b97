import { openFreshPostgres } from '../support/pg.ts';
import { trackerWorkspacesContract } from '../support/tracker-workspaces-contract.ts';

trackerWorkspacesContract('Postgres', () => openFreshPostgres('tracker_workspaces'));
