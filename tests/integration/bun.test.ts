import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSvc, type SvcProcess } from '../support/svc-process.ts';

// The services on Bun (scripts/install-bun.sh): `bun src/main.ts dev` serves retrieval and explore as on Node.
const ports = { RETRIEVAL: 18780, EXPLORE: 18781, TRACKER: 18782, DASHBOARDS_RUNTIME: 18783 };
const as = (user: string, role: string) => ({ 'X-User-Id': user, 'X-User-Role': role });

describe('svc dev on Bun', () => {
  let svc: SvcProcess;
  let dataDir: string;

  beforeAll(async () => {
    const bun = execFileSync('bash', ['scripts/install-bun.sh'], { encoding: 'utf8' }).trim();
    dataDir = await mkdtemp(join(tmpdir(), 'svc-bun-'));
    const env: NodeJS.ProcessEnv = { ...process.env, SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'warn', SVC_LLM_URL: '', SVC_EMBED_URL: '' };
    for (const [name, port] of Object.entries(ports)) env[`SVC_${name}_PORT`] = String(port);
    svc = await startSvc(['src/main.ts', 'dev'], env, { until: 'dashboards-runtime', timeoutMs: 90_000, command: bun });
  }, 180_000);

  afterAll(async () => {
    await svc?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it.each(Object.entries(ports))('%s answers /health with 200', async (_name, port) => {
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
  });

  it('answers a question from the embedded sample', async () => {
    const res = await fetch(`http://127.0.0.1:${ports.EXPLORE}/query`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...as('ana', 'svc-analyst') },
      body: JSON.stringify({ question: 'how many customers are there per nation' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ row_count: 25 });
  });

  it('stores, indexes and retrieves a document', async () => {
    const base = `http://127.0.0.1:${ports.RETRIEVAL}`;
    const created = await fetch(`${base}/collections`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...as('eve', 'svc-engineer') },
      body: JSON.stringify({ slug: 'on-bun', name: 'On Bun', description: '', allowed_roles: [] }),
    });
    expect(created.status).toBe(201);
    const form = new FormData();
    form.append('file', new Blob(['Bread is baked from flour.\n\nThe rocket burns liquid hydrogen.'], { type: 'text/plain' }), 'notes.txt');
    expect(
      (await fetch(`${base}/collections/on-bun/documents`, { method: 'POST', headers: as('eve', 'svc-engineer'), body: form })).status,
    ).toBe(201);
    const q = await fetch(`${base}/collections/on-bun/query`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...as('uma', 'svc-user') },
      body: JSON.stringify({ question: 'what does the rocket burn', top_k: 1 }),
    });
    expect(q.status).toBe(200);
    expect((await q.json()).chunks[0].text).toContain('hydrogen');
  });
});
