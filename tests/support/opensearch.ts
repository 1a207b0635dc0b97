// The real OpenSearch for integration tests (issue 35): scripts/start-opensearch.sh starts it with security on and
// writes its settings to $SVC_RUN/opensearch-<port>/env; openSearchSettings() starts it when nothing answers and
// reads them. SVC_IT_OPENSEARCH_PORT picks the port (default 19200).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@opensearch-project/opensearch';

export type OpenSearchSettings = { url: string; user: string; password: string; ca: string };

const port = process.env.SVC_IT_OPENSEARCH_PORT || '19200';
const runDir = process.env.SVC_RUN ?? join(process.env.SVC_CACHE ?? join(homedir(), '.cache/svc'), 'run');
const startScript = fileURLToPath(new URL('../../scripts/start-opensearch.sh', import.meta.url));

let started: Promise<unknown> | undefined;

/** Starts the server if it is not answering (a no-op when it is), then reads what its script wrote. */
export async function openSearchSettings(): Promise<OpenSearchSettings> {
  started ??= promisify(execFile)('bash', [startScript, port], { timeout: 600_000 });
  await started;
  const env = Object.fromEntries(
    readFileSync(join(runDir, `opensearch-${port}`, 'env'), 'utf8')
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return {
    url: env.SVC_OPENSEARCH_URL!,
    user: env.SVC_OPENSEARCH_USER!,
    password: env.SVC_OPENSEARCH_PASSWORD!,
    ca: env.SVC_OPENSEARCH_CA!,
  };
}

/**
 * The settings that put a retrieval harness's search backend on the integration OpenSearch (as SVC_* variables),
 * with an index prefix of the calling file's own; `dropIndexes` removes every index under it (the file's afterAll).
 */
export async function searchEnv(): Promise<{ env: Record<string, string>; dropIndexes(): Promise<void> }> {
  const s = await openSearchSettings();
  const prefix = `svc-test-${randomBytes(4).toString('hex')}`;
  const env = {
    SVC_OPENSEARCH_URL: s.url,
    SVC_OPENSEARCH_USER: s.user,
    SVC_OPENSEARCH_PASSWORD: s.password,
    SVC_OPENSEARCH_CA_FILE: s.ca,
    // a single node holds no replica
    SVC_RAG_SEARCH_REPLICAS: '0',
    SVC_RAG_SEARCH_INDEX_PREFIX: prefix,
  };
  return {
    env,
    async dropIndexes() {
      const client = new Client({ node: s.url, auth: { username: s.user, password: s.password }, ssl: { ca: readFileSync(s.ca) } });
      await client.indices.delete({ index: `${prefix}-*`, ignore_unavailable: true, allow_no_indices: true });
      await client.close();
    },
  };
}
