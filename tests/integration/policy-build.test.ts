import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { copyOfPolicies } from '../support/opa.ts';

// CI's policy check (scripts/check-policies.sh) on a copy of the repository's policies, so the edits below never
// touch the working tree.

function edit(dir: string, file: string, from: string, to: string) {
  const path = join(dir, file);
  const text = readFileSync(path, 'utf8');
  expect(text).toContain(from);
  writeFileSync(path, text.replace(from, to));
}

const check = (dir: string) => spawnSync('bash', [join(dir, 'scripts/check-policies.sh')], { encoding: 'utf8' });
const STALE = 'policies/build is stale: run `svc policies build` (npm run policies:build) and commit the result';

beforeAll(() => {
  execFileSync('bash', ['scripts/install-opa.sh']);
  execFileSync('bash', ['scripts/install-regal.sh']);
});

it('passes on the committed sources and build', () => {
  const result = check(copyOfPolicies());
  expect(result.stdout).toContain('policies/build is up to date');
  expect(result.status).toBe(0);
});

it('fails when a Rego rule changed without a rebuild, and says how to fix it', () => {
  const dir = copyOfPolicies();
  edit(dir, 'policies/svc/tables/tables.rego', 'denied: no rule allowed this table', 'denied: nothing allowed this table');
  const result = check(dir);
  expect(result.stderr).toContain(STALE);
  expect(result.status).toBe(1);
});

it('fails when the data changed without a rebuild', () => {
  const dir = copyOfPolicies();
  edit(dir, 'policies/data.json', '"users": {}', '"users": { "zed": ["tpch.tiny.supplier"] }');
  const result = check(dir);
  expect(result.stderr).toContain(STALE);
  expect(result.status).toBe(1);
});

it('passes again once the build is rebuilt', () => {
  const dir = copyOfPolicies();
  edit(dir, 'policies/data.json', '"users": {}', '"users": { "zed": ["tpch.tiny.supplier"] }');
  execFileSync('bash', [join(dir, 'scripts/build-policies.sh')]);
  expect(check(dir).status).toBe(0);
});

it('fails when a case does not hold', () => {
  const dir = copyOfPolicies();
  edit(
    dir,
    'policies/svc/tables/cases.json',
    '"name": "viewer reads no table", "input": {"user": "vic", "roles": ["svc-viewer"], "table": "tpch.tiny.nation"}, "allow": false',
    '"name": "viewer reads no table", "input": {"user": "vic", "roles": ["svc-viewer"], "table": "tpch.tiny.nation"}, "allow": true',
  );
  const result = check(dir);
  expect(result.stdout).toContain('viewer reads no table');
  expect(result.status).not.toBe(0);
});

it('fails when the Rego is not formatted', () => {
  const dir = copyOfPolicies();
  edit(dir, 'policies/svc/tables/tables.rego', '\tcount(parts) == 3', '\t  count(parts)  ==  3');
  const result = check(dir);
  expect(result.stderr).toContain('policies are not formatted: policies/svc/tables/tables.rego');
  expect(result.status).toBe(1);
});

it('fails when Regal finds a violation, naming it', () => {
  const dir = copyOfPolicies();
  edit(dir, 'policies/svc/tables/tables_test.rego', '\tsome c in tables.cases\n', '\tsome c in tables.cases\n\tprint(c.name)\n');
  const result = check(dir);
  expect(result.stdout).toContain('Call to print or trace function');
  expect(result.stdout).toContain('policies/svc/tables/tables_test.rego');
  expect(result.status).not.toBe(0);
});
