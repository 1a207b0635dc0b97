import { afterAll } from 'vitest';
import { dropLakeSchema, LAKE_ASKERS, lakeEnv, lakeTokens, runSchema } from '../support/lake.ts';
import { openFreshPostgres } from '../support/pg.ts';
import { retrievalAnswerContract } from '../support/retrieval-answer-contract.ts';
import { retrievalContract } from '../support/retrieval-contract.ts';
import { retrievalHybridContract } from '../support/retrieval-hybrid-contract.ts';
import { retrievalWatchContract } from '../support/retrieval-watch-contract.ts';
import { who } from '../support/retrieval.ts';
import { folderPlace } from '../support/watched-places.ts';

// The retrieval contracts with every collection on the lake (SVC_RAG_DEFAULT_BACKEND=lake): created, written and
// ranked through the integration Trino. Whoever asks is someone Trino's rules let read the lake
// (scripts/trino/rules.json): eve, and lia, ugo and val in the analyst's, user's and viewer's places, since ana, uma and
// vic of the memory runs are refused by Trino there (retrieval-lake.test.ts). What the lake leaves out: the case of
// chunks stored before row codes were kept (Postgres rows; a lake table has no row codes).
const schema = runSchema();
const lake = await lakeEnv();
const env = { ...lake.env, SVC_RAG_DEFAULT_BACKEND: 'lake', SVC_RAG_LAKE_SCHEMA: schema };
const askers = LAKE_ASKERS;
const tokens = await lakeTokens([who.engineer.user, who.admin.user, ...Object.values(askers).map((a) => a.user)]);

retrievalContract('lake', () => openFreshPostgres('lake_http'), { env, tokens, askers, agent: askers.user.user, rowCodes: false });
retrievalHybridContract('lake', () => openFreshPostgres('lake_hybrid'), { env, tokens, asker: who.engineer });
retrievalAnswerContract('lake', () => openFreshPostgres('lake_answer'), { env, tokens, asker: who.engineer });
retrievalWatchContract('folder, lake', () => openFreshPostgres('lake_watch'), folderPlace, { env, tokens, asker: askers.user });

// the contracts leave their collections (and so their tables) in place: this file's schema goes with them
afterAll(() => dropLakeSchema(schema, lake.ca), 300_000);
