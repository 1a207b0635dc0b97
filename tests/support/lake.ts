import { createLake, type Lake } from '../../src/retrieval/backends/index.ts';
import { ensureTrino, TRINO_URL, trinoToken } from './trino.ts';

// The lake backend on the integration Trino (scripts/start-trino.sh: an `iceberg` catalog whose tables are in MinIO,
// its catalog in Postgres; scripts/trino/rules.json lets svc-service write it and eve read it). Test collections'
// tables go in a schema of their own, so a run never meets a deployment's tables.
export const LAKE_SCHEMA = 'iceberg.retrieval_test';

export async function openTestLake(opts: { schema?: string; insertChunks?: number } = {}): Promise<{ lake: Lake; ca: string }> {
  const { ca } = ensureTrino();
  const lake = createLake({
    connection: { url: TRINO_URL, ca, source: 'svc-retrieval-test' },
    serviceUser: 'svc-service',
    serviceToken: await trinoToken('svc-service'),
    schema: opts.schema ?? LAKE_SCHEMA,
    timeoutMs: 180_000,
    insertChunks: opts.insertChunks ?? 500,
    keywordMaxChunks: 1_000_000,
  });
  return { lake, ca };
}

/** Each user's Trino token, as the ingress would pass it in X-User-Token. */
export async function lakeTokens(users: readonly string[]): Promise<Record<string, string>> {
  return Object.fromEntries(await Promise.all(users.map(async (u) => [u, await trinoToken(u)] as const)));
}
