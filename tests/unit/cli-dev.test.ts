import { mkdtemp, rm } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSvc, type SvcProcess } from '../support/svc-process.ts';

// `svc dev` through its public interface: a child process on free ports, each service's /health answering 200.
const ports = { RETRIEVAL: 18680, EXPLORE: 18681, TRACKER: 18682, DASHBOARDS_RUNTIME: 18683 };

describe('svc dev', () => {
  let svc: SvcProcess;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-dev-'));
    const env: NodeJS.ProcessEnv = { ...process.env, SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'warn', SVC_LLM_URL: '', SVC_EMBED_URL: '' };
    for (const [name, port] of Object.entries(ports)) env[`SVC_${name}_PORT`] = String(port);
    svc = await startSvc(['dev'], env, { until: 'dashboards-runtime', timeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await svc?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('prints every service URL', () => {
    for (const [name, port] of Object.entries(ports)) {
      const service = name.toLowerCase().replace('_', '-');
      expect(svc.output()).toMatch(new RegExp(`${service}\\s+http://127\\.0\\.0\\.1:${port}`));
    }
  });

  it("listens on loopback only: the machine's other addresses refuse the connection", async () => {
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && a.family === 'IPv4' && !a.internal);
    expect(others.length, 'this test needs a non-loopback address').toBeGreaterThan(0);
    for (const a of others) {
      const err = await fetch(`http://${a!.address}:${ports.EXPLORE}/health`, { signal: AbortSignal.timeout(5000) }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect((err?.cause as { code?: string } | undefined)?.code).toBe('ECONNREFUSED');
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
    expect(svc.output()).toContain('offline');
  });
});

describe('svc dev logs', () => {
  const env = (dataDir: string, base: number): NodeJS.ProcessEnv => ({
    ...process.env,
    SVC_DATA_DIR: dataDir,
    SVC_LOG_LEVEL: 'info',
    SVC_LLM_URL: '',
    SVC_EMBED_URL: '',
    SVC_RETRIEVAL_PORT: String(base),
    SVC_EXPLORE_PORT: String(base + 1),
    SVC_TRACKER_PORT: String(base + 2),
    SVC_DASHBOARDS_RUNTIME_PORT: String(base + 3),
  });

  it('are lines for a person on a terminal, and JSON lines when piped', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'svc-dev-logs-'));
    // `script` gives the child a pseudo-terminal as its stdout
    const tty = await startSvc(['-qfec', `${join(process.cwd(), 'bin/svc')} dev`, '/dev/null'], env(dataDir, 18690), {
      until: 'dashboards-runtime listening',
      timeoutMs: 60_000,
      command: 'script',
    });
    const piped = await startSvc(['dev'], env(join(dataDir, 'piped'), 18694), { until: 'dashboards-runtime listening', timeoutMs: 60_000 });
    try {
      const readable = tty
        .output()
        .split('\n')
        .filter((l) => l.includes('retrieval listening'));
      expect(readable.length, tty.output()).toBeGreaterThan(0);
      expect(readable[0]).toMatch(/INFO/);
      expect(readable[0]!.trim().startsWith('{')).toBe(false);
      const json = piped
        .output()
        .split('\n')
        .filter((l) => l.includes('retrieval listening'));
      expect(json.length, piped.output()).toBeGreaterThan(0);
      expect(JSON.parse(json[0]!)).toMatchObject({ level: 'info', service: 'retrieval', msg: 'retrieval listening' });
    } finally {
      await tty.stop();
      await piped.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
