import { homedir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { PEOPLE, type Person } from './identities.ts';
import type { Identity } from './retrieval.ts';
import { ensureTrino, TRINO_PORT, TRINO_URL, trinoStatement, trinoToken } from './trino.ts';

// The lake backend on the integration Trino (scripts/start-trino.sh: an `iceberg` catalog whose tables are in MinIO,
// its catalog in Postgres; scripts/trino/rules.json lets svc-service write it, ada read and write it, and eve, lia, ugo
// and val read it). Test collections' tables go in a schema of their own, so a run never meets a deployment's tables.
export const LAKE_SCHEMA = 'iceberg.retrieval_test';

const asker = (p: Person): Identity => ({ user: p.user, roles: p.role });
/** The retrieval contracts' analyst, user and viewer on the lake: people of those roles whom Trino lets read it. */
export const LAKE_ASKERS = { analyst: asker(PEOPLE.lia), user: asker(PEOPLE.ugo), viewer: asker(PEOPLE.val) };

/** The settings that put a retrieval harness's lake on the integration Trino (as SVC_* variables). */
export async function lakeEnv(): Promise<{ env: Record<string, string>; ca: string }> {
  const { ca } = ensureTrino();
  const run = process.env.SVC_RUN ?? join(process.env.SVC_CACHE ?? join(homedir(), '.cache/svc'), 'run');
  return {
    ca,
    env: {
      SVC_TRINO_URL: TRINO_URL,
      SVC_TRINO_CA_FILE: join(run, `trino-${TRINO_PORT}`, 'keys', 'ca.pem'),
      SVC_TRINO_SERVICE_TOKEN: await trinoToken('svc-service'),
      SVC_RAG_LAKE_SCHEMA: LAKE_SCHEMA,
      SVC_RAG_LAKE_TIMEOUT_MS: '180000',
    },
  };
}

/** A schema of one test file's own (`iceberg.retrieval_test_<random>`), so its tables can all be dropped at its end. */
export const runSchema = () => `${LAKE_SCHEMA}_${randomBytes(4).toString('hex')}`;

/** Drops every table of the schema, then the schema, as the service user (a test file's afterAll). */
export async function dropLakeSchema(schema: string, ca: string): Promise<void> {
  const token = await trinoToken('svc-service');
  const [catalog, name] = schema.split('.');
  const { rows } = await trinoStatement(
    `SELECT table_name FROM ${catalog}.information_schema.tables WHERE table_schema = '${name}'`,
    token,
    ca,
  );
  for (const [table] of rows) await trinoStatement(`DROP TABLE IF EXISTS ${schema}."${String(table)}"`, token, ca);
  await trinoStatement(`DROP SCHEMA IF EXISTS ${schema}`, token, ca);
}

/** Each user's Trino token, as the ingress would pass it in X-User-Token. */
export async function lakeTokens(users: readonly string[]): Promise<Record<string, string>> {
  return Object.fromEntries(await Promise.all(users.map(async (u) => [u, await trinoToken(u)] as const)));
}

/** Where an import writes its Parquet files: the integration MinIO (scripts/start-s3.sh) with its test credentials. */
export const LAKE_FILES = {
  SVC_RAG_LAKE_S3_ENDPOINT_URL: 'http://127.0.0.1:19000',
  SVC_OBJSTORE_ACCESS_KEY_ID: 'svcminio',
  SVC_OBJSTORE_SECRET_ACCESS_KEY: 'svcminio-secret',
};

/**
 * The environment of `svc embed` run as a process on a test database: the retrieval settings given, the database's
 * connection, the embedded policy, callers named by the ingress's headers, and `user`'s Trino token as SVC_TOKEN.
 */
export async function embedCommandEnv(
  settings: Record<string, string>,
  db: { host: string; port: number; database: string; user: string; password?: string | undefined },
  user: string,
  tokenLife = '1h',
): Promise<NodeJS.ProcessEnv> {
  return {
    ...process.env,
    ...settings,
    SVC_LOG_LEVEL: 'warn',
    SVC_AUTH_MODE: 'headers',
    SVC_OPA_URL: '',
    SVC_PG_HOST: db.host,
    SVC_PG_PORT: String(db.port),
    SVC_PG_DATABASE: db.database,
    SVC_PG_USER: db.user,
    SVC_PG_PASSWORD: db.password ?? '',
    SVC_TOKEN: await trinoToken(user, tokenLife),
  };
}
