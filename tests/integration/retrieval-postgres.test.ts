import { openFreshPostgres } from '../support/pg.ts';
import { retrievalContract } from '../support/retrieval-contract.ts';
import { retrievalFormatsContract } from '../support/retrieval-formats-contract.ts';

retrievalContract('Postgres', () => openFreshPostgres('retrieval'));
retrievalFormatsContract('Postgres', () => openFreshPostgres('formats'));
