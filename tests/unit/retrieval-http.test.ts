import { openPglite } from '../../src/platform/db/index.ts';
import { retrievalContract } from '../support/retrieval-contract.ts';
import { retrievalFormatsContract } from '../support/retrieval-formats-contract.ts';
import { retrievalHostileContract } from '../support/retrieval-hostile-contract.ts';
import { retrievalIngestContract } from '../support/retrieval-ingest-contract.ts';
import { retrievalUploadContract } from '../support/retrieval-upload-contract.ts';

const pglite = async () => {
  const db = await openPglite({});
  return { db, cleanup: () => db.close() };
};

retrievalContract('PGlite', pglite);
retrievalFormatsContract('PGlite', pglite);
retrievalHostileContract('PGlite', pglite);
retrievalIngestContract('PGlite', pglite);
retrievalUploadContract('PGlite', pglite);
