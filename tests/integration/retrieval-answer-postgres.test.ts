import { openFreshPostgres } from '../support/pg.ts';
import { retrievalAnswerContract } from '../support/retrieval-answer-contract.ts';
import { retrievalAnswerSessionContract } from '../support/retrieval-answer-session-contract.ts';

// Answers and their sessions on real PostgreSQL with pgvector, the chat model a scripted server.
retrievalAnswerContract('Postgres', () => openFreshPostgres('answer'));
retrievalAnswerSessionContract('Postgres', () => openFreshPostgres('answer_session'));
