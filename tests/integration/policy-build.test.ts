import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';

// CI's policy check on a copy of the repository: a Rego change without a rebuild must fail it, naming the fix.
function copyOfPolicies(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-policies-'));
  cpSync('policies', join(dir, 'policies'), { recursive: true });
  cpSync('scripts', join(dir, 'scripts'), { recursive: true });
  return dir;
}

const check = (dir: string) => spawnSync('bash', [join(dir, 'scripts/check-policies.sh')], { encoding: 'utf8' });

it('passes on the committed sources and bundle', () => {
  execFileSync('bash', ['scripts/install-opa.sh']);
  const result = check(copyOfPolicies());
  expect(result.stderr + result.stdout).toContain('policies/build is up to date');
  expect(result.status).toBe(0);
});

it('fails when a rule changed without `svc policies build`, and says to run it', () => {
  const dir = copyOfPolicies();
  const file = join(dir, 'policies/data.json');
  writeFileSync(file, readFileSync(file, 'utf8').replace('"users": {}', '"users": { "zed": ["tpch.tiny.nation"] }'));
  const result = check(dir);
  expect(result.status).toBe(1);
  expect(result.stderr).toContain('Run `svc policies build`');
});

it('fails when a Rego rule changed without a rebuild', () => {
  const dir = copyOfPolicies();
  const file = join(dir, 'policies/tables/tables.rego');
  writeFileSync(file, readFileSync(file, 'utf8').replace('denied: no rule allowed this table', 'denied: nothing allowed this table'));
  const result = check(dir);
  expect(result.status).toBe(1);
  expect(result.stderr).toContain('policies/build is stale');
});
