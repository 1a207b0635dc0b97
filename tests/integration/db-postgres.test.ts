import { dbContract } from '../support/db-contract.ts';
import { openFreshPostgres } from '../support/pg.ts';

dbContract('Postgres', () => openFreshPostgres('db'));
