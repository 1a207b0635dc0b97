import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSE_LISTEN, runSvc } from '../support/svc-run.ts';

// `--help` and `--version` on every command and subcommand, through bin/svc: exit 0 with the usage, and nothing
// started. A preload makes any socket bind throw and say so (tests/support/refuse-listen.mjs), and the data folder
// must not appear (no database opened, no key generated); the last test shows that both checks catch a command that
// does start something.
const version = (await import('../../package.json', { with: { type: 'json' } })).default.version;

const COMMANDS: { args: string[]; usage: string; says: RegExp }[] = [
  { args: [], usage: 'svc <command>', says: /svc dev\s/ },
  { args: ['dev'], usage: 'svc dev', says: /embedded defaults/ },
  { args: ['serve'], usage: 'svc serve [service]', says: /--port/ },
  { args: ['db'], usage: 'svc db', says: /migrate/ },
  { args: ['db', 'migrate'], usage: 'svc db migrate', says: /migrations/ },
  { args: ['tracker'], usage: 'svc tracker', says: /db/ },
  { args: ['tracker', 'db'], usage: 'svc tracker db', says: /upgrade/ },
  { args: ['tracker', 'db', 'upgrade'], usage: 'svc tracker db upgrade', says: /schema/ },
  { args: ['dashboards'], usage: 'svc dashboards', says: /resign/ },
  { args: ['dashboards', 'resign'], usage: 'svc dashboards resign', says: /current key/ },
  { args: ['policies'], usage: 'svc policies', says: /explain/ },
  { args: ['policies', 'build'], usage: 'svc policies build', says: /--sign/ },
  { args: ['policies', 'impact'], usage: 'svc policies impact', says: /--fail-on-gain/ },
  { args: ['policies', 'explain'], usage: 'svc policies explain', says: /--collection/ },
  { args: ['audit'], usage: 'svc audit', says: /prune/ },
  { args: ['audit', 'verify'], usage: 'svc audit verify', says: /--anchor/ },
  { args: ['audit', 'export'], usage: 'svc audit export', says: /--from/ },
  { args: ['audit', 'head'], usage: 'svc audit head', says: /latest seq/ },
  { args: ['audit', 'prune'], usage: 'svc audit prune', says: /--through/ },
  { args: ['lake'], usage: 'svc lake', says: /maintain/ },
  { args: ['lake', 'maintain'], usage: 'svc lake maintain', says: /--retain/ },
  { args: ['completion'], usage: 'svc completion', says: /bash or zsh/ },
];

// Each run is a child process, several at a time: on a busy machine one can take tens of seconds.
const SLOW = 120_000;

let dataDir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  const parent = await mkdtemp(join(tmpdir(), 'svc-help-'));
  dataDir = join(parent, 'data'); // not created: a command that opened the database or made a key would create it
  env = { ...process.env, SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'warn', NODE_OPTIONS: REFUSE_LISTEN };
});
afterAll(() => rm(join(dataDir, '..'), { recursive: true, force: true }));

describe.concurrent('svc <command> --help', () => {
  it.each(COMMANDS)(
    'svc $args --help: exit 0 with the usage, nothing bound or opened',
    async ({ args, usage, says }) => {
      const run = await runSvc([...args, '--help'], env);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(usage);
      expect(run.stdout).toMatch(says);
      expect(run.stdout).toContain('--version');
      expect(existsSync(dataDir)).toBe(false);
    },
    SLOW,
  );

  // --version is the same global option on every command: one per depth and per kind of command
  const VERSIONED = [['dev'], ['serve', 'explore'], ['policies', 'explain'], ['tracker', 'db', 'upgrade'], ['audit', 'prune']];
  it.each(VERSIONED.map((args) => ({ args })))(
    'svc $args --version: the version, nothing bound or opened',
    async ({ args }) => {
      const run = await runSvc([...args, '--version'], env);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout.trim()).toBe(version);
      expect(existsSync(dataDir)).toBe(false);
    },
    SLOW,
  );

  it(
    'svc help and svc with no command print the usage too',
    async () => {
      for (const args of [['help'], []]) {
        const run = await runSvc(args, env);
        expect(run.code).toBe(0);
        expect(run.stdout).toContain('svc <command>');
        expect(run.stderr).toBe('');
      }
    },
    SLOW,
  );
});

it(
  'the checks catch a command that does start something: svc serve binds, and makes its key in the data folder',
  async () => {
    const run = await runSvc(['serve', 'dashboards-runtime', '--port', '0'], { ...env, SVC_HOST: '127.0.0.1' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('refuse-listen: a socket was about to be bound');
    expect(existsSync(dataDir)).toBe(true);
  },
  SLOW,
);
