import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.ts';
import { startSvc, type SvcProcess } from '../support/svc-process.ts';

// Issue 31, finding 6: a watched subfolder renamed back and forth while scans run, against `svc dev` as a real
// process (every service on one event loop), so that an unhandled 'error' event of a read stream would end it.
// No outside server: it is here because it runs for 20 s and starts a process.
const SERVICES = ['RETRIEVAL', 'EXPLORE', 'TRACKER', 'DASHBOARDS_RUNTIME'] as const;
const STORM_MS = 20_000;
const FILES = 24;

describe('a watched folder renamed back and forth while it is scanned', () => {
  let dev: SvcProcess;
  let dataDir: string;
  let source: string;
  const ports: Record<string, number> = {};
  const base = (name: string) => `http://127.0.0.1:${ports[name]}`;
  const eve = { 'X-User-Id': 'eve', 'X-User-Role': 'svc-engineer' };
  const status = async () =>
    (await (
      await fetch(`${base('RETRIEVAL')}/collections/renamed/watch`, { headers: eve, signal: AbortSignal.timeout(10_000) })
    ).json()) as {
      error: string | null;
      last_scan_at: string | null;
      counts: { seen: number; ingested: number; failed: number };
      failures: { path: string; status: string; reason: string }[];
    };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-watch-rename-'));
    const root = join(dataDir, 'watched');
    source = join(root, 'docs');
    await mkdir(join(source, 'sub'), { recursive: true });
    await writeFile(join(source, 'top.txt'), 'The top file names the anchor valve.');
    for (let i = 0; i < FILES; i++) await writeFile(join(source, 'sub', `f-${i}.txt`), `Sub file ${i} names the gauge G-${i}.`);
    for (const name of SERVICES) ports[name] = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SVC_DATA_DIR: join(dataDir, 'dev'),
      SVC_PG_HOST: '',
      SVC_LOG_LEVEL: 'warn',
      SVC_LLM_URL: '',
      SVC_EMBED_URL: '',
      SVC_WATCH_ROOTS: root,
      SVC_WATCH_POLL_SECONDS: '1',
    };
    for (const name of SERVICES) env[`SVC_${name}_PORT`] = String(ports[name]);
    dev = await startSvc(['dev'], env, { until: 'dashboards-runtime', timeoutMs: 180_000 });
  }, 240_000);
  afterAll(async () => {
    await dev?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps every service answering /health for 20 s, records the failed reads, and settles once the renames stop', async () => {
    expect(dev.alive(), dev.output()).toBe(true);
    const created = await fetch(`${base('RETRIEVAL')}/collections`, {
      method: 'POST',
      headers: { ...eve, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        slug: 'renamed',
        name: 'Renamed',
        allowed_roles: [],
        watch: { uri: pathToFileURL(source).href, interval_seconds: 1 },
      }),
    });
    expect(created.status).toBe(201);
    await expect.poll(async () => (await status()).counts?.ingested, { timeout: 60_000, interval: 250 }).toBe(FILES + 1);

    // sub <-> sub2 as fast as the file system takes it, with a pause now and then so that some reads land
    let storming = true;
    let renames = 0;
    const storm = async () => {
      const [a, b] = [join(source, 'sub'), join(source, 'sub2')];
      while (storming) {
        await rename(a, b);
        await rename(b, a);
        renames += 2;
        if (renames % 20 === 0) await new Promise((r) => setTimeout(r, 5));
      }
    };
    const failures = new Set<string>();
    const healthFailures: string[] = [];
    let scansSeen = 0;
    const watchStatus = async () => {
      let last: string | null = null;
      while (storming) {
        try {
          const s = await status();
          for (const f of s.failures) failures.add(`${f.path}: ${f.reason}`);
          if (s.counts.failed > 0) failures.add(`a scan counted ${s.counts.failed} failed`);
          if (s.last_scan_at !== last) scansSeen++;
          last = s.last_scan_at;
        } catch (err) {
          healthFailures.push(`GET /collections/renamed/watch: ${(err as Error).message}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const health = async (name: string) => {
      while (storming) {
        const res = await fetch(`${base(name)}/health`, { signal: AbortSignal.timeout(10_000) }).catch((err: Error) => err);
        if (res instanceof Error || res.status !== 200) healthFailures.push(`${name}: ${res instanceof Error ? res.message : res.status}`);
        if (res instanceof Response) await res.arrayBuffer();
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const running = [storm(), watchStatus(), ...SERVICES.map(health)];
    await new Promise((r) => setTimeout(r, STORM_MS));
    storming = false;
    await Promise.all(running);

    expect(dev.alive(), dev.output().slice(-4000)).toBe(true);
    expect(healthFailures).toEqual([]);
    expect(renames).toBeGreaterThan(100);
    expect(scansSeen).toBeGreaterThan(3);
    // the reads that lost the race are per-file failures in the watch's status, not a stopped process
    expect([...failures].length).toBeGreaterThan(0);

    // With the folder back in place, the next scans index every file and keep no failure.
    await expect
      .poll(
        async () => {
          const s = await status();
          return { error: s.error, failures: s.failures, seen: s.counts.seen };
        },
        { timeout: 60_000, interval: 500 },
      )
      .toEqual({ error: null, failures: [], seen: FILES + 1 });
    const docs = (await (await fetch(`${base('RETRIEVAL')}/collections/renamed/documents`, { headers: eve })).json()) as {
      documents: { filename: string }[];
    };
    // one document per file (a document first stored from sub2/ keeps that name: the bytes are the same)
    expect(docs.documents.map((d) => d.filename.slice(d.filename.lastIndexOf('/') + 1)).sort()).toEqual(
      ['top.txt', ...Array.from({ length: FILES }, (_, i) => `f-${i}.txt`)].sort(),
    );
  }, 180_000);
});
