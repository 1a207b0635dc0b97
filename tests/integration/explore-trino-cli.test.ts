import { mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSvc, type SvcProcess } from '../support/svc-process.ts';
import { ensureTrino, trinoToken, TRINO_PORT, TRINO_URL } from '../support/trino.ts';

// `svc serve explore` configured for Trino through its settings alone (URL, CA file, service user and token): the
// deployment path, not the in-process harness. The analyst's answer carries Trino's row filter.
const PORT = 18691;

describe('svc serve explore on Trino', () => {
  let svc: SvcProcess;
  let dataDir: string;

  beforeAll(async () => {
    ensureTrino();
    dataDir = await mkdtemp(join(tmpdir(), 'svc-explore-trino-'));
    const keys = join(
      process.env.SVC_RUN ?? join(process.env.SVC_CACHE ?? join(homedir(), '.cache/svc'), 'run'),
      `trino-${TRINO_PORT}`,
      'keys',
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SVC_DATA_DIR: dataDir,
      SVC_LOG_LEVEL: 'info',
      SVC_PG_HOST: '',
      SVC_OPA_URL: '',
      SVC_LLM_URL: '',
      SVC_TRINO_URL: TRINO_URL,
      SVC_TRINO_CA_FILE: join(keys, 'ca.pem'),
      SVC_TRINO_SERVICE_TOKEN: await trinoToken('svc-service'),
    };
    svc = await startSvc(['serve', 'explore', '--port', String(PORT)], env, { until: 'explore listening', timeoutMs: 60_000 });
  }, 120_000);

  afterAll(async () => {
    await svc?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const ask = async (user: string, question: string) => {
    const res = await fetch(`http://127.0.0.1:${PORT}/query`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-User-Id': user,
        'X-User-Role': 'svc-analyst',
        'X-User-Token': await trinoToken(user),
      },
      body: JSON.stringify({ question, force: true }),
    });
    return { status: res.status, body: (await res.json()) as { preview_rows: number[][]; sql: string } };
  };

  it('says it runs on Trino and answers each analyst with their own rows', async () => {
    expect(svc.output()).toContain('statements run on Trino as the caller');
    const ana = await ask('ana', 'how many orders are there');
    const abe = await ask('abe', 'how many orders are there');
    expect(ana.status).toBe(200);
    expect(abe.body.preview_rows).toEqual([[15000]]);
    expect(ana.body.preview_rows[0]![0]).toBeLessThan(15000);
  });
});
