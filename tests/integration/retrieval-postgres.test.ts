import { openFreshPostgres } from '../support/pg.ts';
import { retrievalContract } from '../support/retrieval-contract.ts';
import { retrievalFormatsContract } from '../support/retrieval-formats-contract.ts';
import { retrievalHostileContract } from '../support/retrieval-hostile-contract.ts';
import { retrievalIngestContract } from '../support/retrieval-ingest-contract.ts';
import { retrievalLibraryContract } from '../support/retrieval-library-contract.ts';
import { retrievalHybridContract } from '../support/retrieval-hybrid-contract.ts';
import { retrievalUploadContract } from '../support/retrieval-upload-contract.ts';

retrievalContract('Postgres', () => openFreshPostgres('retrieval'));
retrievalFormatsContract('Postgres', () => openFreshPostgres('formats'));
retrievalHostileContract('Postgres', () => openFreshPostgres('hostile'));
retrievalIngestContract('Postgres', () => openFreshPostgres('ingest'));
retrievalUploadContract('Postgres', () => openFreshPostgres('upload'));
retrievalHybridContract('Postgres', () => openFreshPostgres('hybrid'));
retrievalLibraryContract('Postgres', () => openFreshPostgres('library'));
