import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc } from '../support/svc-run.ts';

// `svc embed`'s command line, refused before the database opens (exit 2, one line naming what to change). The
// command itself runs on the real servers: tests/integration/retrieval-lake-embed-cli.test.ts.
const SLOW = 180_000;
let parent: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), 'svc-cli-embed-'));
  env = { ...process.env, SVC_DATA_DIR: join(parent, 'data'), SVC_LOG_LEVEL: 'warn' };
  delete env.SVC_PG_HOST;
});
afterAll(() => rm(parent, { recursive: true, force: true }));

describe.concurrent('svc embed, refused', () => {
  const source = ['--source', 'tpch.tiny.orders', '--text', 'o_comment', '--key', 'o_orderkey'];
  it.each([
    [['orders'], 'svc: name the rows: --source, --text and --key (or --import <id> to join an import)'],
    [
      ['orders', '--source', 'tpch.tiny.orders', '--text', 'o_comment'],
      'svc: name the rows: --source, --text and --key (or --import <id> to join an import)',
    ],
    [['orders', ...source, '--shard', '2/2'], "svc: --shard must be i/n with 0 <= i < n, got '2/2'"],
    [['orders', ...source, '--shard', 'half'], "svc: --shard must be i/n with 0 <= i < n, got 'half'"],
    [['orders', ...source, '--workers', '0'], 'svc: --workers must be a positive integer, got 0'],
    [[], 'svc: Not enough non-option arguments: got 0, need at least 1'],
  ])(
    'svc embed %j: exit 2, "%s", before the database opens',
    async (args, said) => {
      const dataDir = join(parent, `untouched-${args.join('').replace(/\W/g, '')}`);
      const run = await runSvc(['embed', ...args], { ...env, SVC_DATA_DIR: dataDir });
      expect(run.stderr.split('\n')[0]).toBe(said);
      expect(run.code).toBe(2);
      expect(existsSync(dataDir)).toBe(false);
    },
    SLOW,
  );
});
