import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPolicyEngine,
  createSidecarPolicyEngine,
  createWasmPolicyEngine,
  DEFAULT_BUNDLE_DIR,
  type PolicyEngine,
} from '../../src/platform/policy/index.ts';
import { policyCaseSuite } from '../support/policy-cases.ts';

const anyInput = { user: 'ada', roles: ['svc-admin'], table: 'tpch.tiny.nation' };

describe('wasm policy engine', () => {
  let engine: PolicyEngine;
  beforeAll(async () => {
    engine = await createWasmPolicyEngine();
  });
  policyCaseSuite('wasm', () => engine);

  it('is the default engine and reports ready', async () => {
    const chosen = await createPolicyEngine({});
    expect(chosen.kind).toBe('wasm');
    expect(await chosen.ready()).toBe(true);
  });
});

describe('a failing policy engine denies', () => {
  it('denies everything when the bundle is missing, and is not ready', async () => {
    const engine = await createWasmPolicyEngine({ bundleDir: join(tmpdir(), 'no-such-bundle') });
    const decision = await engine.decide('tables', anyInput);
    expect(decision).toEqual({ allow: false, reason: expect.stringContaining('policy engine error') });
    expect(await engine.ready()).toBe(false);
  });

  it('denies when the wasm is corrupt', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bad-bundle-'));
    await writeFile(join(dir, 'policy.wasm'), 'not wasm');
    await copyFile(new URL('data.json', DEFAULT_BUNDLE_DIR), join(dir, 'data.json'));
    const engine = await createWasmPolicyEngine({ bundleDir: dir });
    expect((await engine.decide('tables', anyInput)).allow).toBe(false);
  });

  it('denies when the data is missing, so no grant exists', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'no-data-'));
    await copyFile(new URL('policy.wasm', DEFAULT_BUNDLE_DIR), join(dir, 'policy.wasm'));
    await writeFile(join(dir, 'data.json'), '{}');
    const engine = await createWasmPolicyEngine({ bundleDir: dir });
    expect((await engine.decide('tables', anyInput)).allow).toBe(false);
  });

  it('denies a decision that does not exist', async () => {
    const engine = await createWasmPolicyEngine();
    expect((await engine.decide('nope' as 'tables', anyInput)).allow).toBe(false);
  });

  it('denies when the OPA sidecar is unreachable', async () => {
    const engine = createSidecarPolicyEngine({ url: 'http://127.0.0.1:1' });
    const decision = await engine.decide('tables', anyInput);
    expect(decision.allow).toBe(false);
    expect(decision.reason).toContain('policy engine error');
    expect(await engine.ready()).toBe(false);
  });

  describe('when the OPA sidecar misbehaves', () => {
    let server: Server;
    let answer: (res: import('node:http').ServerResponse) => void = () => {};
    let url = '';
    beforeAll(async () => {
      server = createServer((_req, res) => answer(res));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it.each([
      ['a 500', (res: import('node:http').ServerResponse) => res.writeHead(500).end('{"code":"internal_error"}')],
      ['garbage', (res: import('node:http').ServerResponse) => res.writeHead(200).end('<html>')],
      ['an undefined decision', (res: import('node:http').ServerResponse) => res.writeHead(200).end('{}')],
      ['a non-boolean allow', (res: import('node:http').ServerResponse) => res.writeHead(200).end('{"result":{"allow":"yes","reason":"x"}}')],
      ['no answer in time', (_res: import('node:http').ServerResponse) => {}],
    ])('denies on %s', async (_, respond) => {
      answer = respond;
      const engine = createSidecarPolicyEngine({ url, timeoutMs: 300 });
      const decision = await engine.decide('tables', anyInput);
      expect(decision.allow).toBe(false);
      expect(decision.reason).toContain('policy engine error');
    });
  });
});
