import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSidecarPolicyEngine, createWasmPolicyEngine, type PolicyEngine } from '../../src/platform/policy/index.ts';
import { freePort } from '../support/free-port.ts';
import { copyOfPolicies, startOpa, stopOpa } from '../support/opa.ts';
import { decisionsWithCases } from '../support/policy-cases.ts';

// A decision is declared in its Rego alone: a new folder under policies/svc whose `decision` rule carries an
// `entrypoint: true` annotation is built into the wasm and served by OPA, and both adapters list it and answer it,
// with its name written nowhere else. Done on a copy of the repository, so the working tree is never touched.
const greeting = `package svc.greeting

import data.svc.lib

# METADATA
# title: Greeting
# description: May this caller be greeted? Every caller with a known role is.
# scope: document
# entrypoint: true
default decision := {"allow": false, "reason": "denied: no rule allowed this greeting"}

decision := lib.verdict(false, reason) if {
	reason := lib.refusal
} else := lib.verdict(true, concat("", ["allowed: hello ", input.user]))
`;

let dir = '';
let port = 0;
let built = '';

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-opa.sh']);
  dir = copyOfPolicies();
  mkdirSync(join(dir, 'policies/svc/greeting'));
  writeFileSync(join(dir, 'policies/svc/greeting/greeting.rego'), greeting);
  built = execFileSync('bash', [join(dir, 'scripts/build-policies.sh')], { encoding: 'utf8' });
  port = await freePort();
}, 120_000);
afterAll(() => {
  if (port) stopOpa(port, dir);
});

const all = [...decisionsWithCases(), 'greeting'].sort();

async function answersTheNewDecision(engine: PolicyEngine) {
  expect(await engine.decisions()).toEqual(all);
  expect(await engine.decide('greeting', { user: 'ada', roles: ['svc-admin'] })).toEqual({ allow: true, reason: 'allowed: hello ada' });
  expect(await engine.decide('greeting', { user: 'sam', roles: ['made-up'] })).toEqual({
    allow: false,
    reason: 'denied: unknown role made-up',
  });
  // The decisions that were there answer as before.
  expect(await engine.decide('tables', { user: 'uma', roles: ['svc-user'], table: 'tpch.tiny.orders' })).toEqual({
    allow: true,
    reason: 'allowed: role svc-user grants tpch.tiny.orders',
  });
}

it('is built: opa build takes the entrypoint from the annotation', () => {
  expect(built).toContain(`decisions: ${all.join(', ')}`);
});

it('is listed and answered by the wasm build in-process', async () => {
  await answersTheNewDecision(await createWasmPolicyEngine({ buildDir: join(dir, 'policies/build') }));
});

it('is listed and answered by a real OPA through the sidecar adapter', async () => {
  await answersTheNewDecision(createSidecarPolicyEngine({ url: startOpa(port, dir) }));
});

it('is unknown to the committed build, which holds only the decisions of the repository', async () => {
  const committed = await createWasmPolicyEngine();
  expect(await committed.decisions()).not.toContain('greeting');
  expect(await committed.decide('greeting', { user: 'ada', roles: ['svc-admin'] })).toEqual({
    allow: false,
    reason: "policy engine error: unknown decision 'greeting'",
  });
});
