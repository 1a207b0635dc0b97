import { openFreshPostgres } from '../support/pg.ts';
import { trackerApiContract } from '../support/tracker-api-contract.ts';

trackerApiContract('Postgres', () => openFreshPostgres('tracker_api'));
