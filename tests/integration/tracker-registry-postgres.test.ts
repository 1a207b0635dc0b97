import { openFreshPostgres } from '../support/pg.ts';
import { trackerRegistryContract } from '../support/tracker-registry-contract.ts';

trackerRegistryContract('Postgres', () => openFreshPostgres('tracker_registry'));
