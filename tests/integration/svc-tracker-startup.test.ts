import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, migratePlatform, openPostgres } from '../../src/platform/db/index.ts';
import { ensurePostgres, freshDatabase, realPgConfig } from '../support/pg.ts';

// `svc serve tracker` as an operator runs it, against the real Postgres of scripts/start-postgres.sh: it refuses
// to start on an unreachable or missing database (saying so in the log), and on a schema older than the code it
// stays up read-only until `svc tracker db upgrade` runs.
const SVC = join(process.cwd(), 'bin/svc');
const PORT = 18751;
const run = promisify(execFile);

function pgEnv(overrides: Record<string, string>, dataDir: string): NodeJS.ProcessEnv {
  const cfg = realPgConfig();
  return {
    ...process.env,
    SVC_DATA_DIR: dataDir,
    SVC_LOG_LEVEL: 'info',
    SVC_PG_HOST: cfg.host,
    SVC_PG_PORT: String(cfg.port),
    SVC_PG_USER: cfg.user,
    SVC_PG_PASSWORD: cfg.password ?? '',
    TRACKER_MIGRATE_AT_START: '',
    SVC_TRACKER_MIGRATE_AT_START: '',
    ...overrides,
  };
}

/** Runs `svc serve tracker` until it exits (it should, quickly); its exit code and everything it printed. */
async function serveUntilExit(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn(SVC, ['serve', 'tracker', '--port', String(PORT)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, output };
}

describe('svc serve tracker start-up', () => {
  let dataDir: string;
  beforeAll(async () => {
    await ensurePostgres();
    dataDir = await mkdtemp(join(tmpdir(), 'svc-tracker-startup-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("exits non-zero with 'could not connect' when the database is unreachable", async () => {
    const { code, output } = await serveUntilExit(pgEnv({ SVC_PG_PORT: '1' }, dataDir));
    expect(code).not.toBe(0);
    expect(output).toContain('could not connect');
  });

  it("exits non-zero with 'database does not exist' when the database is missing", async () => {
    const { code, output } = await serveUntilExit(pgEnv({ SVC_PG_DATABASE: 'svc_tracker_no_such_db' }, dataDir));
    expect(code).not.toBe(0);
    expect(output).toContain('database does not exist');
    expect(output).toContain('database "svc_tracker_no_such_db" does not exist');
  });
});

describe('svc serve tracker on an older schema', () => {
  let child: ChildProcess;
  let output = '';
  let dataDir: string;
  let fresh: Awaited<ReturnType<typeof freshDatabase>>;
  let env: NodeJS.ProcessEnv;
  const api = (path: string, body?: unknown) =>
    fetch(`http://127.0.0.1:${PORT}/api/2.0/mlflow/${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, any> }));

  beforeAll(async () => {
    fresh = await freshDatabase('tracker_old_schema');
    dataDir = await mkdtemp(join(tmpdir(), 'svc-tracker-old-'));
    // An older release: the platform migrations and only the first tracker migration.
    const db = openPostgres(fresh.cfg);
    const shipped = await loadMigrations(new URL('../../src/tracker/migrations/', import.meta.url));
    await migratePlatform(db);
    await migrate(db, 'tracker', shipped.slice(0, 1));
    await db.close();

    env = pgEnv({ SVC_PG_DATABASE: fresh.cfg.database }, dataDir);
    child = spawn(SVC, ['serve', 'tracker', '--port', String(PORT)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const deadline = Date.now() + 60_000;
    while (!output.includes('tracker listening') && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 200));
  }, 120_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    if (child && child.exitCode === null) await new Promise((r) => child.once('exit', r));
    await fresh?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves reads, including the ones MLflow sends as POST, and refuses writes naming the upgrade command', async () => {
    expect(output).toContain('tracker listening');
    expect(output).toContain('svc tracker db upgrade');
    expect((await fetch(`http://127.0.0.1:${PORT}/health`)).status).toBe(200);
    expect((await api('experiments/get?experiment_id=0')).body.experiment.name).toBe('Default');
    expect((await api('runs/search', { experiment_ids: ['0'] })).status).toBe(200);
    expect((await api('experiments/search', { max_results: 10 })).status).toBe(200);

    const refused = await api('experiments/create', { name: 'while-old' });
    expect(refused.status).toBe(403);
    expect(refused.body.error_code).toBe('PERMISSION_DENIED');
    expect(refused.body.message).toContain('svc tracker db upgrade');
  });

  it('accepts writes once `svc tracker db upgrade` has run', async () => {
    const upgrade = await run(SVC, ['tracker', 'db', 'upgrade'], { env });
    expect(upgrade.stdout).toContain('applied tracker/');
    const again = await run(SVC, ['tracker', 'db', 'upgrade'], { env });
    expect(again.stdout).toContain('up to date');

    const created = await api('experiments/create', { name: 'after-upgrade' });
    expect(created.status).toBe(200);
    expect(created.body.experiment_id).toMatch(/^\d+$/);
  });
});
