import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `svc dev` through its public interface: a child process on free ports, each service's /health answering 200.
const ports = { RETRIEVAL: 18680, EXPLORE: 18681, TRACKER: 18682, DASHBOARDS_RUNTIME: 18683 };

describe('svc dev', () => {
  let child: ChildProcess;
  let output = '';
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-dev-'));
    const env: NodeJS.ProcessEnv = { ...process.env, SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'warn', SVC_LLM_URL: '', SVC_EMBED_URL: '' };
    for (const [name, port] of Object.entries(ports)) env[`SVC_${name}_PORT`] = String(port);
    child = spawn(join(process.cwd(), 'bin/svc'), ['dev'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const deadline = Date.now() + 60_000;
    while (!output.includes('dashboards-runtime') && Date.now() < deadline && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 90_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    await new Promise((r) => child?.once('exit', r));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('prints every service URL', () => {
    for (const [name, port] of Object.entries(ports)) {
      const service = name.toLowerCase().replace('_', '-');
      expect(output).toMatch(new RegExp(`${service}\\s+http://localhost:${port}`));
    }
  });

  it.each(Object.entries(ports))('%s answers /health with 200', async (_name, port) => {
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok' });
  });

  it('refuses a request without identity with 401 problem+json', async () => {
    const res = await fetch(`http://127.0.0.1:${ports.RETRIEVAL}/collections`);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(await res.json()).toMatchObject({ status: 401, title: 'Unauthorized' });
  });

  it('answers "how many customers are there per nation" with no gateway configured', async () => {
    const res = await fetch(`http://127.0.0.1:${ports.EXPLORE}/query`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst' },
      body: JSON.stringify({ question: 'how many customers are there per nation' }),
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.row_count).toBe(25);
    expect(output).toContain('offline');
  });
});
