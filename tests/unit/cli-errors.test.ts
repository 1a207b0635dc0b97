import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.ts';
import { REFUSE_LISTEN, runSvc } from '../support/svc-run.ts';

// What a user sees when the command line or a setting is wrong, through bin/svc: one line naming what to change, the
// exit code (2: the command line, 1: a setting or the machine), and no stack trace. A preload makes any socket bind
// throw (tests/support/refuse-listen.mjs), so a check that ran too late would show.
// Each run is a child process, several at a time (svc dev loads every service): on a busy machine one can take a minute.
const SLOW = 180_000;

let parent: string;
let dataDir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), 'svc-cli-errors-'));
  dataDir = join(parent, 'data');
  env = { ...process.env, SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'warn', NODE_OPTIONS: REFUSE_LISTEN };
});
afterAll(() => rm(parent, { recursive: true, force: true }));

const noStack = (text: string) => expect(text).not.toMatch(/^\s+at /m);

describe.concurrent('a port out of range', () => {
  it(
    'in a *_PORT setting is a configuration error naming the setting, before anything opens',
    async () => {
      const run = await runSvc(['dev'], { ...env, SVC_EXPLORE_PORT: '70000' });
      expect(run.stderr).toBe(
        'svc: invalid configuration: SVC_EXPLORE_PORT="70000": expected a port from 1 to 65535 (or 0 for any free port)\n',
      );
      expect(run.code).toBe(1);
      expect(existsSync(dataDir)).toBe(false);
    },
    SLOW,
  );

  it(
    'in --port is refused as a usage error',
    async () => {
      const run = await runSvc(['serve', 'explore', '--port', '70000'], env);
      expect(run.stderr.split('\n')[0]).toBe('svc: --port 70000: expected a port from 1 to 65535 (or 0 for any free port)');
      expect(run.code).toBe(2);
      noStack(run.stderr);
    },
    SLOW,
  );

  it(
    'for a port to connect to, 0 is out of range too',
    async () => {
      const run = await runSvc(['db', 'migrate'], { ...env, SVC_PG_HOST: '127.0.0.1', SVC_PG_PORT: '0' });
      expect(run.stderr).toBe('svc: invalid configuration: SVC_PG_PORT="0": expected a port from 1 to 65535\n');
      expect(run.code).toBe(1);
    },
    SLOW,
  );
});

describe.concurrent('unknown flags and commands', () => {
  it.each([
    [['serve', 'explore', '--prot', '8081'], "svc: unknown flag --prot for 'svc serve' (did you mean --port?)"],
    [
      ['policies', 'explain', '--usr', 'ana', '--role', 'svc-analyst', '--table', 't'],
      "svc: unknown flag --usr for 'svc policies explain' (did you mean --user?)",
    ],
    [['audit', 'verify', '--form', '3'], "svc: unknown flag --form for 'svc audit verify' (did you mean --from?)"],
    [['polices', 'explain'], 'svc: unknown command: did you mean policies?'],
    [['db', 'migarte'], 'svc: unknown command: did you mean migrate?'],
    [['serve'], 'svc: svc serve starts one service: name it (retrieval, explore, tracker, dashboards-runtime), e.g. svc serve explore'],
  ])(
    'svc %j: exit 2, "%s"',
    async (args, said) => {
      const run = await runSvc(args, env);
      expect(run.stderr.split('\n')[0]).toBe(said);
      expect(run.stderr).toContain('svc --help');
      expect(run.stdout).toBe('');
      expect(run.code).toBe(2);
      expect(existsSync(dataDir)).toBe(false);
    },
    SLOW,
  );
});

it(
  'svc dev checks every service, the last included, before it opens the database or binds a port',
  async () => {
    // the dashboards runtime is the last service svc dev starts
    const run = await runSvc(['dev'], { ...env, SVC_SANDBOX_MAX: 'lots' });
    expect(run.stderr).toBe('svc: invalid configuration: SVC_SANDBOX_MAX="lots": expected an integer >= 1\n');
    expect(run.code).toBe(1);
    expect(existsSync(dataDir)).toBe(false);
  },
  SLOW,
);

describe('a port in use', () => {
  let holder: Server;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it(
    'says which setting to change, in one line, and exits 1',
    async () => {
      const { NODE_OPTIONS: _, ...binds } = env;
      const run = await runSvc(['serve', 'dashboards-runtime'], {
        ...binds,
        SVC_HOST: '127.0.0.1',
        SVC_DASHBOARDS_RUNTIME_PORT: String(port),
      });
      expect(run.stderr.trim().split('\n').at(-1)).toBe(
        `svc: port ${port} is in use: set SVC_DASHBOARDS_RUNTIME_PORT (or --port) to a free port`,
      );
      expect(run.code).toBe(1);
      noStack(run.stderr);
    },
    SLOW,
  );
});
