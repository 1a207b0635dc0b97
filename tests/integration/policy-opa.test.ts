import { execFileSync } from 'node:child_process';
import { beforeAll, expect, it } from 'vitest';
import { createPolicyEngine, type PolicyEngine } from '../../src/platform/policy/index.ts';
import { policyCaseSuite } from '../support/policy-cases.ts';

// The same case tables against a real OPA server (scripts/start-opa.sh) through the sidecar adapter.
const url = process.env.SVC_IT_OPA_URL ?? 'http://127.0.0.1:18181';
let engine: PolicyEngine;

beforeAll(async () => {
  execFileSync('bash', ['scripts/start-opa.sh'], { stdio: 'inherit' });
  engine = await createPolicyEngine({ OPA_URL: url });
});

it('selects the sidecar when SVC_OPA_URL is set, and it is ready', async () => {
  expect(engine.kind).toBe('sidecar');
  expect(await engine.ready()).toBe(true);
});

policyCaseSuite('OPA sidecar', () => engine);
