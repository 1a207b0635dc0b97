import { openPglite } from '../../src/platform/db/index.ts';
import { retrievalAnswerContract } from '../support/retrieval-answer-contract.ts';
import { retrievalAnswerSessionContract } from '../support/retrieval-answer-session-contract.ts';

const pglite = async () => {
  const db = await openPglite({});
  return { db, cleanup: () => db.close() };
};

retrievalAnswerContract('PGlite', pglite);
retrievalAnswerSessionContract('PGlite', pglite);
