import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPolicy } from '@open-policy-agent/opa-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPolicyEngine,
  createSidecarPolicyEngine,
  createWasmPolicyEngine,
  DEFAULT_BUILD_DIR,
  entrypointOf,
  type PolicyEngine,
} from '../../src/platform/policy/index.ts';
import { decisionsWithCases, policyCaseSuite } from '../support/policy-cases.ts';

const anyInput = { user: 'ada', roles: ['svc-admin'], table: 'tpch.tiny.nation' };
const engineError = { allow: false, reason: expect.stringMatching(/^policy engine error: /) };

describe('wasm policy engine', () => {
  let engine: PolicyEngine;
  beforeAll(async () => {
    engine = await createWasmPolicyEngine();
  });

  policyCaseSuite('wasm', () => engine);

  it('is the default engine, reads the committed build wherever the process runs, and is ready', async () => {
    expect(DEFAULT_BUILD_DIR).toBe(fileURLToPath(new URL('../../policies/build', import.meta.url)));
    const chosen = await createPolicyEngine({});
    expect(chosen.kind).toBe('wasm');
    expect(await chosen.ready()).toBe(true);
  });

  it('ships the configuration and nothing else: no case table, no test', async () => {
    const built = JSON.parse(await readFile(join(DEFAULT_BUILD_DIR, 'data.json'), 'utf8'));
    const source = JSON.parse(await readFile(new URL('../../policies/data.json', import.meta.url), 'utf8'));
    expect(built).toEqual(source);
  });

  it('asks the host for no builtin: every builtin it uses is native to the wasm', async () => {
    // The SDK's host builtins (sprintf above all) behave differently from OPA's, and a missing one only throws
    // at evaluation time: the build must need none.
    const policy = await loadPolicy(await readFile(join(DEFAULT_BUILD_DIR, 'policy.wasm')));
    const wasm = policy.wasmInstance as WebAssembly.Instance;
    const exports = wasm.exports as Record<string, (...args: number[]) => number>;
    const addr = exports.opa_json_dump!(exports.builtins!());
    const memory = new Uint8Array(policy.mem.buffer);
    const end = memory.indexOf(0, addr);
    expect(JSON.parse(new TextDecoder().decode(memory.subarray(addr, end)))).toEqual({});
    // Its entrypoints are the decisions annotated in the Rego, each with a case table.
    expect(Object.keys(policy.entrypoints).sort()).toEqual(decisionsWithCases().map(entrypointOf));
  });

  it('answers an input it cannot serialise with a deny', async () => {
    const circular: Record<string, unknown> = { user: 'ada', roles: ['svc-admin'] };
    circular.self = circular;
    expect(await engine.decide('tables', circular)).toEqual(engineError);
    expect(await engine.decide('tables', { ...anyInput, big: 1n })).toEqual(engineError);
    // The instance is still sound afterwards.
    expect((await engine.decide('tables', anyInput)).allow).toBe(true);
  });

  it('denies a decision it does not know', async () => {
    expect(await engine.decide('nope', anyInput)).toEqual({ allow: false, reason: "policy engine error: unknown decision 'nope'" });
    expect(await engine.decide('lib', anyInput)).toEqual({ allow: false, reason: "policy engine error: unknown decision 'lib'" });
  });
});

describe('a wasm engine without a sound build denies everything', () => {
  const withBuild = async (files: { wasm?: string; data?: string }) => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-policy-build-'));
    if (files.wasm === undefined) await copyFile(join(DEFAULT_BUILD_DIR, 'policy.wasm'), join(dir, 'policy.wasm'));
    else await writeFile(join(dir, 'policy.wasm'), files.wasm);
    if (files.data === undefined) await copyFile(join(DEFAULT_BUILD_DIR, 'data.json'), join(dir, 'data.json'));
    else await writeFile(join(dir, 'data.json'), files.data);
    return createWasmPolicyEngine({ buildDir: dir });
  };

  it('when the build folder is missing, and is not ready', async () => {
    const engine = await createWasmPolicyEngine({ buildDir: join(tmpdir(), 'svc-no-such-build') });
    const decision = await engine.decide('tables', anyInput);
    expect(decision).toEqual(engineError);
    expect(decision.reason).toContain('cannot load the policy build');
    expect(await engine.ready()).toBe(false);
    await expect(engine.decisions()).rejects.toThrow('cannot load the policy build');
  });

  it('when the wasm is corrupt', async () => {
    const engine = await withBuild({ wasm: 'not wasm' });
    expect(await engine.decide('dashboards', anyInput)).toEqual(engineError);
    expect(await engine.ready()).toBe(false);
  });

  it('when the data is not JSON', async () => {
    const engine = await withBuild({ data: '{"svc": ' });
    expect(await engine.decide('collections', anyInput)).toEqual(engineError);
    expect(await engine.ready()).toBe(false);
  });

  it('when the data holds no configuration: no grant exists, and the reason says why', async () => {
    const engine = await withBuild({ data: '{}' });
    for (const name of decisionsWithCases()) {
      expect(await engine.decide(name, anyInput)).toEqual({ allow: false, reason: expect.stringContaining('no policy configuration') });
    }
  });
});

describe('a sidecar engine that cannot get a sound answer denies', () => {
  it('when nothing listens on its port, and is not ready', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const engine = createSidecarPolicyEngine({ url: `http://127.0.0.1:${port}` });
    const decision = await engine.decide('tables', anyInput);
    expect(decision).toEqual(engineError);
    expect(decision.reason).toContain(`OPA at http://127.0.0.1:${port}`);
    expect(await engine.ready()).toBe(false);
  });

  it('when its fetch throws', async () => {
    const engine = createSidecarPolicyEngine({ url: 'http://opa.invalid', fetch: async () => Promise.reject(new TypeError('boom')) });
    expect(await engine.decide('collections', anyInput)).toEqual({ allow: false, reason: expect.stringContaining('boom') });
  });

  it('denies a name that cannot be a decision, without asking', async () => {
    let asked = false;
    const engine = createSidecarPolicyEngine({ url: 'http://opa.invalid', fetch: async () => ((asked = true), new Response('{}')) });
    for (const name of ['../config', 'tables/decision', 'Tables', '', 'svc.tables']) {
      expect(await engine.decide(name, anyInput)).toEqual({ allow: false, reason: `policy engine error: unknown decision '${name}'` });
    }
    expect(asked).toBe(false);
  });

  it('cannot list its decisions when OPA cannot', async () => {
    const down = createSidecarPolicyEngine({ url: 'http://opa.invalid', fetch: async () => Promise.reject(new TypeError('boom')) });
    await expect(down.decisions()).rejects.toThrow('OPA at http://opa.invalid failed to list its policies: boom');
    const failing = createSidecarPolicyEngine({ url: 'http://opa.invalid', fetch: async () => new Response('{}', { status: 500 }) });
    await expect(failing.decisions()).rejects.toThrow('answered HTTP 500');
    const odd = createSidecarPolicyEngine({ url: 'http://opa.invalid', fetch: async () => new Response('{"result": 7}') });
    await expect(odd.decisions()).rejects.toThrow('without a result');
  });

  // A stand-in for OPA that misbehaves on purpose: only for the error paths. The real server's answers are tested
  // in tests/integration/policy-opa.test.ts.
  describe('when the server misbehaves', () => {
    let server: Server;
    let answer: (res: ServerResponse) => void = () => {};
    let url = '';
    const seen: { method?: string; path?: string; body: string }[] = [];
    beforeAll(async () => {
      server = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk) => (body += chunk));
        req.on('end', () => {
          seen.push({ method: req.method, path: req.url, body });
          answer(res);
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    });

    const json = (status: number, body: string) => (res: ServerResponse) =>
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(body);

    it.each([
      ['a 500', json(500, '{"code":"internal_error","message":"boom"}'), 'answered HTTP 500'],
      ['a 404', json(404, '{}'), 'answered HTTP 404'],
      ['garbage', json(200, '<html>'), 'failed'],
      ['an empty body', json(200, ''), 'failed'],
      ['a JSON null', json(200, 'null'), 'not an object'],
      ['an undefined decision ({})', json(200, '{}'), 'is undefined'],
      ['an empty result', json(200, '{"result":[]}'), 'malformed'],
      ['a bare boolean', json(200, '{"result":true}'), 'malformed'],
      ['a non-boolean allow', json(200, '{"result":{"allow":"yes","reason":"x"}}'), 'malformed'],
      ['no reason', json(200, '{"result":{"allow":true}}'), 'malformed'],
      ['no answer in time', () => {}, 'did not answer within 300 ms'],
    ])('on %s', async (_, respond, why) => {
      answer = respond;
      // only the case about the time limit waits for it: on a loaded machine a first answer can take over 300 ms
      const timeoutMs = why.startsWith('did not answer') ? 300 : 5000;
      const engine = createSidecarPolicyEngine({ url: `${url}/`, timeoutMs });
      const decision = await engine.decide('dashboards', anyInput);
      expect(decision).toEqual(engineError);
      expect(decision.reason).toContain(why);
      expect(seen.at(-1)).toEqual({
        method: 'POST',
        path: '/v1/data/svc/dashboards/decision?provenance',
        body: JSON.stringify({ input: anyInput }),
      });
    });

    it('reports not ready when /health fails', async () => {
      answer = json(500, '{}');
      expect(await createSidecarPolicyEngine({ url, timeoutMs: 300 }).ready()).toBe(false);
    });
  });
});
