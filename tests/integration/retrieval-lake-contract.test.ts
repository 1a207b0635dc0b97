import { afterAll } from 'vitest';
import { dropLakeSchema, lakeEnv, lakeTokens, runSchema } from '../support/lake.ts';
import { openFreshPostgres } from '../support/pg.ts';
import { retrievalHybridContract } from '../support/retrieval-hybrid-contract.ts';
import { who } from '../support/retrieval.ts';

// The hybrid and keyword contract with every collection on the lake (SVC_RAG_DEFAULT_BACKEND=lake): created,
// written and ranked through the integration Trino. Questions are asked by eve, whom Trino's rules let read the lake
// (scripts/trino/rules.json); the other roles of the memory runs are refused by Trino there (retrieval-lake.test.ts).
const schema = runSchema();
const lake = await lakeEnv();
const env = { ...lake.env, SVC_RAG_DEFAULT_BACKEND: 'lake', SVC_RAG_LAKE_SCHEMA: schema };
const tokens = await lakeTokens([who.engineer.user, who.admin.user]);

retrievalHybridContract('lake', () => openFreshPostgres('lake_hybrid'), { env, tokens, asker: who.engineer });

// the contract leaves its collections (and so their tables) in place: this file's schema goes with them
afterAll(() => dropLakeSchema(schema, lake.ca), 300_000);
