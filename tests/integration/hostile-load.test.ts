import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { xlsx } from '../fixtures/ooxml.ts';
import { freePort } from '../support/free-port.ts';
import { startSvc, type SvcProcess } from '../support/svc-process.ts';
import JSZip from 'jszip';

// What a hostile caller sends, against the real processes: a 2 KB spreadsheet built to make a naive XML reader
// quadratic, and 100 MB bodies, to every service at once, while /health of each is polled. Every service must keep
// answering (its event loop is never held), and the tracker must survive the bodies under its pod's heap cap.
const MB = 1024 * 1024;

async function hostileXlsx(): Promise<Uint8Array> {
  const zip = await JSZip.loadAsync(await xlsx([{ name: 'S', rows: [['a']] }]));
  zip.file(
    'xl/worksheets/sheet1.xml',
    `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${'<row>'.repeat(120_000)}`,
  );
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE', compressionOptions: { level: 9 } });
}

/** 100 MB sent as fast as the server takes it, without a declared length; a refusal may close the socket early. */
async function sendHundredMegabytes(url: string, headers: Record<string, string>): Promise<number | 'closed'> {
  let sent = 0;
  const chunk = new Uint8Array(MB).fill(0x20);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= 100 * MB) return controller.close();
      sent += MB;
      controller.enqueue(chunk);
    },
  });
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body,
      duplex: 'half',
    } as RequestInit);
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 'closed';
  }
}

describe('hostile requests against the running services', () => {
  let dev: SvcProcess;
  let tracker: SvcProcess;
  let dataDir: string;
  const ports: Record<string, number> = {};

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-hostile-'));
    for (const name of ['RETRIEVAL', 'EXPLORE', 'TRACKER', 'DASHBOARDS_RUNTIME', 'LONE_TRACKER']) ports[name] = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SVC_DATA_DIR: join(dataDir, 'dev'),
      SVC_LOG_LEVEL: 'warn',
      SVC_LLM_URL: '',
      SVC_EMBED_URL: '',
    };
    for (const name of ['RETRIEVAL', 'EXPLORE', 'TRACKER', 'DASHBOARDS_RUNTIME']) env[`SVC_${name}_PORT`] = String(ports[name]);
    // every service in one process: the worst case, one event loop for all
    dev = await startSvc(['dev'], env, { until: 'dashboards-runtime', timeoutMs: 120_000 });
    // the tracker alone, under the heap cap of its pod (k8s/base/config/tracker.env)
    tracker = await startSvc(
      ['serve', 'tracker', '--port', String(ports.LONE_TRACKER)],
      {
        ...process.env,
        SVC_DATA_DIR: join(dataDir, 'tracker'),
        SVC_PG_HOST: '',
        SVC_LOG_LEVEL: 'warn',
        NODE_OPTIONS: '--max-old-space-size=320',
      },
      { until: 'tracker listening', timeoutMs: 120_000 },
    );
  }, 300_000);
  afterAll(async () => {
    await dev?.stop();
    await tracker?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps every /health answering while a hostile spreadsheet and 100 MB bodies arrive, and the tracker alive', async () => {
    const base = (name: string) => `http://127.0.0.1:${ports[name]}`;
    const eve = { 'X-User-Id': 'eve', 'X-User-Role': 'svc-engineer' };
    expect(
      (
        await fetch(`${base('RETRIEVAL')}/collections`, {
          method: 'POST',
          headers: { ...eve, 'Content-Type': 'application/json' },
          body: JSON.stringify({ slug: 'hostile', name: 'Hostile', allowed_roles: [] }),
        })
      ).status,
    ).toBe(201);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(await hostileXlsx())]), 'rows.xlsx');

    const latencies: Record<string, number[]> = {};
    let sending = true;
    const poll = async (name: string) => {
      latencies[name] = [];
      while (sending) {
        const t = performance.now();
        const res = await fetch(`${base(name)}/health`);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        latencies[name]!.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    const polls = ['RETRIEVAL', 'EXPLORE', 'TRACKER', 'DASHBOARDS_RUNTIME', 'LONE_TRACKER'].map(poll);
    await new Promise((r) => setTimeout(r, 200));
    const [upload, ...bodies] = await Promise.all([
      fetch(`${base('RETRIEVAL')}/collections/hostile/documents`, { method: 'POST', headers: eve, body: form }).then(
        async (r) => (await r.arrayBuffer(), r.status),
      ),
      sendHundredMegabytes(`${base('EXPLORE')}/query`, { 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst' }),
      sendHundredMegabytes(`${base('RETRIEVAL')}/collections`, eve),
      sendHundredMegabytes(`${base('TRACKER')}/api/2.0/mlflow/runs/log-batch`, {}),
      sendHundredMegabytes(`${base('DASHBOARDS_RUNTIME')}/d/anything`, {}),
      sendHundredMegabytes(`${base('LONE_TRACKER')}/api/2.0/mlflow/runs/log-batch`, {}),
    ]);
    sending = false;
    await Promise.all(polls);

    expect(upload).toBeGreaterThanOrEqual(400);
    expect(upload).toBeLessThan(500);
    for (const status of bodies) expect([413, 400, 'closed']).toContain(status);
    const summary = Object.fromEntries(
      Object.entries(latencies).map(([name, xs]) => {
        const sorted = [...xs].sort((a, b) => a - b);
        return [name, { n: xs.length, p50: Math.round(sorted[Math.floor(xs.length / 2)]!), max: Math.round(sorted.at(-1)!) }];
      }),
    );
    console.log('/health while hostile requests arrived (ms):', JSON.stringify(summary));
    for (const [name, s] of Object.entries(summary)) {
      expect(s.n, name).toBeGreaterThan(3);
      // the median is the bound; the worst case only has to show that no loop was held (a quadratic reader
      // held it for 16 s)
      expect(s.p50, `${name} /health median`).toBeLessThan(100);
      expect(s.max, `${name} /health worst`).toBeLessThan(3000);
    }
    expect(tracker.alive()).toBe(true);
    expect(dev.alive()).toBe(true);
    // and both still do their work
    const exp = await fetch(`${base('LONE_TRACKER')}/api/2.0/mlflow/experiments/get-by-name?experiment_name=Default`);
    expect(exp.status).toBe(200);
  }, 300_000);
});
