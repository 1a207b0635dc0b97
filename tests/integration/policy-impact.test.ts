import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase } from '../../src/platform/db/index.ts';
import { loadPlatformConfig } from '../../src/platform/config.ts';
import { exploreService } from '../../src/explore/service.ts';
import { retrievalService } from '../../src/retrieval/service.ts';
import { copyOfPolicies } from '../support/opa.ts';

// `svc policies impact` and `explain` through the CLI, on a copy of the repository made a git repository of its
// own, so a change to its working tree can be compared with its HEAD. The configured database holds one dashboard
// shared with two users and one collection.

const repository = process.cwd();
let dir = '';
let env: NodeJS.ProcessEnv = {};

const svc = (args: string[]) =>
  promisify(execFile)(join(dir, 'bin/svc'), args, { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 }).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout + err.stderr }),
  );

function edit(path: string, change: (text: string) => string) {
  const file = join(dir, path);
  writeFileSync(file, change(readFileSync(file, 'utf8')));
}

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-opa.sh']);
  dir = copyOfPolicies();
  for (const part of ['src', 'bin', 'package.json', 'tsconfig.json']) execFileSync('cp', ['-r', join(repository, part), join(dir, part)]);
  execFileSync('ln', ['-s', join(repository, 'node_modules'), join(dir, 'node_modules')]);
  execFileSync('git', ['init', '-q'], { cwd: dir });
  execFileSync('git', ['add', 'policies'], { cwd: dir });
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'base'], { cwd: dir });

  env = { ...process.env, SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-impact-')), SVC_LOG_LEVEL: 'silent' };
  const db = await openDatabase(loadPlatformConfig(env));
  await exploreService.migrate(db);
  await retrievalService.migrate(db);
  await db.query(
    `INSERT INTO explore_dashboards (id, owner, title, question, sql, columns, file, visibility, allowed_users, allowed_groups)
     VALUES ('d-sales', 'olga', 'Sales', 'q', 'SELECT 1', '[]'::jsonb, '/nowhere', 'users', '["lena","otto"]'::jsonb, '[]'::jsonb)`,
  );
  await db.query(
    `INSERT INTO retrieval_collections (slug, name, allowed_roles, created_by) VALUES ('handbook', 'Handbook', ARRAY['svc-user'], 'eve')`,
  );
  await db.close();
  writeFileSync(
    join(dir, 'users.json'),
    JSON.stringify([
      { user: 'otto', roles: ['svc-analyst'] },
      { user: 'lena', roles: ['svc-user'] },
    ]),
  );
}, 300_000);

afterAll(() => {
  execFileSync('git', ['checkout', '-q', '--', 'policies'], { cwd: dir });
});

it('prints exactly the gain of a change that grants svc-viewer one table, and --fail-on-gain exits 1', async () => {
  edit('policies/data.json', (t) => t.replace('"svc-viewer": []', '"svc-viewer": ["tpch.tiny.nation"]'));
  const json = await svc(['policies', 'impact', '--users', 'users.json', '--json']);
  expect(json.code).toBe(0);
  const report = JSON.parse(json.stdout) as { gains: unknown[]; losses: unknown[] };
  expect(report.gains).toEqual([
    {
      subject: 'role svc-viewer',
      roles: ['svc-viewer'],
      resource: { kind: 'table', id: 'tpch.tiny.nation' },
      actions: ['read'],
      before: 'denied: no role among [svc-viewer] grants tpch.tiny.nation',
      after: 'allowed: role svc-viewer grants tpch.tiny.nation',
    },
  ]);
  expect(report.losses).toEqual([]);
  const text = await svc(['policies', 'impact', '--users', 'users.json', '--fail-on-gain']);
  expect(text.code).toBe(1);
  expect(text.stdout).toContain('gains: 1\n  role svc-viewer\n    + table tpch.tiny.nation (read)');
  expect(text.stdout).toContain('losses: 0');
  execFileSync('git', ['checkout', '-q', '--', 'policies'], { cwd: dir });
}, 300_000);

it("prints exactly the loss of a change that removes a user from a dashboard's list", async () => {
  // The policy stops honouring otto's place on the dashboards' allowed_users.
  edit('policies/svc/dashboards/dashboards.rego', (t) =>
    t.replace(
      'is_listed_user if input.user in listed("allowed_users")',
      'is_listed_user if {\n\tinput.user in listed("allowed_users")\n\tinput.user != "otto"\n}',
    ),
  );
  const json = await svc(['policies', 'impact', '--users', 'users.json', '--json', '--fail-on-gain']);
  expect(json.code).toBe(0);
  const report = JSON.parse(json.stdout) as { gains: unknown[]; losses: unknown[] };
  expect(report.gains).toEqual([]);
  expect(report.losses).toEqual([
    {
      subject: 'user otto',
      roles: ['svc-analyst'],
      resource: { kind: 'dashboard', id: 'd-sales' },
      actions: ['view'],
      before: 'allowed: the dashboard is shared with the caller',
      after: 'denied: the dashboard is not shared with the caller',
    },
  ]);
  execFileSync('git', ['checkout', '-q', '--', 'policies'], { cwd: dir });
}, 300_000);

it('explains a decision: allow or deny, the reason, and the rules that fired', async () => {
  const table = await svc(['policies', 'explain', '--user', 'ana', '--role', 'svc-analyst', '--table', 'tpch.tiny.supplier']);
  expect(table.code).toBe(0);
  expect(table.stdout).toContain('decision: tables -> deny\nreason:   denied: no role among [svc-analyst] grants tpch.tiny.supplier');
  expect(table.stdout).toMatch(/policies\/svc\/tables\/tables\.rego:\d+ {2}excepted {2}excepted\(role\) if \{/);
  const dashboard = await svc(['policies', 'explain', '--user', 'lena', '--role', 'svc-user', '--dashboard', 'd-sales']);
  expect(dashboard.stdout).toContain('decision: dashboards -> allow\nreason:   allowed: the dashboard is shared with the caller');
  expect(dashboard.stdout).toMatch(/dashboards\.rego:\d+ {2}is_listed_user/);
  const collection = await svc(['policies', 'explain', '--user', 'vic', '--role', 'svc-viewer', '--collection', 'handbook']);
  expect(collection.stdout).toContain('decision: collections -> deny\nreason:   denied: the caller holds none of [svc-user]');
  const missing = await svc(['policies', 'explain', '--user', 'vic', '--role', 'svc-viewer', '--collection', 'nope']);
  expect(missing).toEqual({ code: 2, stdout: expect.stringContaining("collection 'nope' does not exist in the configured database") });
}, 300_000);
