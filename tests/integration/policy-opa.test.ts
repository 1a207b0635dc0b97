import { beforeAll, expect, it } from 'vitest';
import { createPolicyEngine, type PolicyEngine } from '../../src/platform/policy/index.ts';
import { startOpa } from '../support/opa.ts';
import { policyCaseSuite } from '../support/policy-cases.ts';

// The same case tables as the wasm suite, against a real OPA server through the sidecar adapter.
let engine: PolicyEngine;

beforeAll(async () => {
  engine = await createPolicyEngine({ OPA_URL: startOpa() });
});

it('selects the sidecar when SVC_OPA_URL is set, and it is ready', async () => {
  expect(engine.kind).toBe('sidecar');
  expect(await engine.ready()).toBe(true);
});

it('serves no case table and no test: only the decisions and their data', async () => {
  const url = startOpa();
  for (const path of ['svc/tables/cases', 'svc/console/cases', 'svc/tables_test', 'svc/lib_test']) {
    const res = await fetch(`${url}/v1/data/${path}`);
    expect(await res.json()).toEqual({});
  }
  const config = await (await fetch(`${url}/v1/data/svc/config/known_roles`)).json();
  expect(config).toEqual({ result: expect.arrayContaining(['svc-admin', 'svc-viewer']) });
});

policyCaseSuite('OPA sidecar', () => engine);
