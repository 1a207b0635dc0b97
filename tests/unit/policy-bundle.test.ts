import { createPrivateKey, createPublicKey } from 'node:crypto';
import { SignJWT } from 'jose';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/platform/http.ts';
import { openCallerResolver } from '../../src/platform/callers.ts';
import { createLogger } from '../../src/platform/log.ts';
import { createMetrics } from '../../src/platform/metrics.ts';
import { unpackBundle } from '../../src/platform/policy/bundle.ts';
import {
  createBundlePolicyEngine,
  createDecisionLog,
  createPolicyMetrics,
  createWasmPolicyEngine,
  inRequest,
  openBundleSource,
  type BundleEngine,
} from '../../src/platform/policy/index.ts';
import { canonicalJson, SIGNATURES_FILE, signaturesJson, verifyFiles } from '../../src/platform/policy/signing.ts';
import { readTarGz, writeTarGz } from '../../src/platform/policy/tar.ts';
import { startTestIssuer } from '../support/oidc-issuer.ts';
import {
  analystLosesTable,
  bundleServer,
  bytes,
  collector,
  committedBundle,
  eventually,
  keyPair,
  LOST_TABLE,
  NEW_ROLE,
  roleAdded,
  sign,
  tampered,
} from '../support/policy-bundles.ts';

const analyst = { user: 'ana', roles: ['svc-analyst'], table: LOST_TABLE };
const key = keyPair('rsa');
const otherKey = keyPair('rsa');
const silent = createLogger('policy', 'silent');

describe('an OPA bundle signature', () => {
  it('verifies what it signed, with RSA and with EC keys', async () => {
    for (const k of [key, keyPair('ec')]) {
      const { files } = unpackBundle(await sign(await committedBundle('r1'), k));
      await expect(verifyFiles(files, { publicKey: createPublicKey(k.publicKeyPem) })).resolves.toBeUndefined();
    }
  });

  it.each([
    [
      'a file changed after signing',
      (a: Uint8Array) => tampered(a, 'data.json', (b) => bytes(new TextDecoder().decode(b).replace('svc-viewer', 'svc-viewers'))),
      'data.json does not match its signed digest',
    ],
    [
      'a file added after signing',
      (a: Uint8Array) => {
        const f = readTarGz(a, 1 << 26);
        f.set('svc/extra.rego', bytes('package svc.extra'));
        return writeTarGz(f);
      },
      'svc/extra.rego is not included in the bundle signature',
    ],
    [
      'a file removed after signing',
      (a: Uint8Array) => {
        const f = readTarGz(a, 1 << 26);
        f.delete('svc/lib/lib.rego');
        return writeTarGz(f);
      },
      'lists svc/lib/lib.rego, missing from the bundle',
    ],
    [
      'no signature',
      (a: Uint8Array) => {
        const f = readTarGz(a, 1 << 26);
        f.delete('.signatures.json');
        return writeTarGz(f);
      },
      'has no .signatures.json',
    ],
  ])('refuses %s', async (_, change, why) => {
    const { files } = unpackBundle(change(await sign(await committedBundle('r1'), key)));
    await expect(verifyFiles(files, { publicKey: createPublicKey(key.publicKeyPem) })).rejects.toThrow(why);
  });

  it('refuses a bundle signed by another key, and one naming another key id when an id is required', async () => {
    const { files } = unpackBundle(await sign(await committedBundle('r1'), otherKey));
    await expect(verifyFiles(files, { publicKey: createPublicKey(key.publicKeyPem) })).rejects.toThrow(
      'does not verify with the configured public key',
    );
    const named = unpackBundle(await sign(await committedBundle('r1'), key, 'svc-2025'));
    await expect(verifyFiles(named.files, { publicKey: createPublicKey(key.publicKeyPem), keyId: 'svc-2026' })).rejects.toThrow(
      "signed with key 'svc-2025'",
    );
  });

  it.each(['SHA-1', 'constructor', '__proto__'])('refuses a file signed with digest %s, which it does not know', async (algorithm) => {
    const { files } = unpackBundle(await sign(await committedBundle('r1'), key));
    const listed = [...files.keys()].filter((name) => name !== SIGNATURES_FILE).map((name) => ({ name, hash: '00', algorithm }));
    const jwt = await new SignJWT({ files: listed, keyid: 'svc' })
      .setProtectedHeader({ alg: 'RS256', kid: 'svc', typ: 'JWT' })
      .sign(createPrivateKey(key.privateKeyPem));
    files.set(SIGNATURES_FILE, signaturesJson(jwt));
    await expect(verifyFiles(files, { publicKey: createPublicKey(key.publicKeyPem) })).rejects.toThrow(
      `is signed with digest '${algorithm}'; accepted: SHA-256, SHA-384, SHA-512`,
    );
  });

  it("digests JSON in OPA's canonical form: sorted keys, no spaces, numbers as written", () => {
    expect(canonicalJson('{ "b": [1.0, 2e3, -0], "a": {"z": null, "y": "x\u2028"} }')).toBe(
      '{"a":{"y":"x\\u2028","z":null},"b":[1.0,2e3,-0]}',
    );
    expect(() => canonicalJson('{"a": 1,}')).toThrow('not valid JSON');
  });
});

describe('the bundle archive', () => {
  it('reads members as OPA writes them: a leading slash, and a PAX long name', () => {
    const files = readTarGz(writeTarGz(new Map([['data.json', bytes('{}')]])), 1 << 20);
    expect([...files.keys()]).toEqual(['data.json']);
    const long = `svc/${'x'.repeat(120)}/a.rego`;
    expect([...readTarGz(writeTarGz(new Map([[`/${long}`, bytes('package x')]])), 1 << 20).keys()]).toEqual([long]);
  });

  it('refuses a member that climbs out, and an archive that inflates past its bound', () => {
    expect(() => writeTarGz(new Map([['../etc/passwd', bytes('x')]]))).toThrow('not a relative path');
    const big = writeTarGz(new Map([['policy.wasm', new Uint8Array(1 << 20)]]));
    expect(() => readTarGz(big, 1 << 16)).toThrow('inflates to more than');
    expect(() => readTarGz(gzipSync(Buffer.from('not a tar at all, but long enough'.repeat(20))), 1 << 20)).toThrow();
  });
});

describe('a bundle engine polling a published bundle', () => {
  let server: Awaited<ReturnType<typeof bundleServer>>;
  let engine: BundleEngine;
  const metrics = createPolicyMetrics();
  beforeAll(async () => {
    server = await bundleServer();
    engine = await createBundlePolicyEngine({
      source: openBundleSource(server.url),
      publicKey: createPublicKey(key.publicKeyPem),
      pollSeconds: 3600, // polled by hand below
      logger: silent,
      metrics,
    });
  });
  afterAll(async () => {
    await engine.close?.();
    await server.close();
  });

  it('denies everything and is not ready until a first bundle is accepted', async () => {
    expect(await engine.ready()).toBe(false);
    expect(engine.revision).toBeUndefined();
    expect(await engine.decide('tables', analyst)).toEqual({
      allow: false,
      reason: expect.stringContaining('no policy bundle accepted from'),
    });
  });

  it('activates a signed bundle, then asks with If-None-Match and keeps it while unchanged', async () => {
    server.publish(await sign(await committedBundle('rev-1'), key));
    expect(await engine.poll()).toEqual({ outcome: 'activated', revision: 'rev-1' });
    expect(await engine.ready()).toBe(true);
    expect((await engine.decide('tables', analyst)).allow).toBe(true);
    expect(await engine.poll()).toEqual({ outcome: 'unchanged', revision: 'rev-1' });
    expect(server.requests.at(-1)).toEqual({ etag: '"v1"', status: 304 });
  });

  it.each([
    [
      'tampered',
      async () =>
        tampered(await sign(await analystLosesTable('rev-x'), key), 'data.json', (b) =>
          bytes(new TextDecoder().decode(b).replace('svc-admin', 'svc-root')),
        ),
      'verify',
      'does not match its signed digest',
    ],
    ['signed by another key', async () => sign(await analystLosesTable('rev-x'), otherKey), 'verify', 'does not verify'],
    [
      'whose policy does not load',
      async () => {
        const b = await analystLosesTable('rev-x');
        b.files.set('policy.wasm', bytes('not wasm'));
        return sign(b, key);
      },
      'load',
      'revision rev-x',
    ],
    [
      'that fails its own cases',
      async () => {
        const b = await committedBundle('rev-x');
        b.files.set('data.json', bytes('{"svc": {}}'));
        return sign(b, key);
      },
      'smoke',
      'fails',
    ],
  ])('refuses a bundle %s: the previous one keeps deciding, and the refusal is counted', async (_, make, stage, why) => {
    server.publish(await make());
    const outcome = await engine.poll();
    expect(outcome).toEqual({ outcome: 'refused', stage, reason: expect.stringContaining(why) });
    expect(engine.revision).toBe('rev-1');
    expect((await engine.decide('tables', analyst)).allow).toBe(true);
    expect(await engine.metrics!()).toMatch(new RegExp(`svc_policy_bundle_refusals_total\\{stage="${stage}"\\} [1-9]`));
  });

  it('swaps in a published change without a restart', async () => {
    server.publish(await sign(await analystLosesTable('rev-2'), key));
    expect(await engine.poll()).toEqual({ outcome: 'activated', revision: 'rev-2' });
    expect(await engine.decide('tables', analyst)).toEqual({
      allow: false,
      reason: `denied: no role among [svc-analyst] grants ${LOST_TABLE}`,
    });
    expect(await engine.metrics!()).toMatch(/svc_policy_bundle_loads_total 2/);
  });

  it('reports the revision in force on /ready, and its counters on /metrics', async () => {
    const app = createApp({ service: 'retrieval', logger: silent, metrics: createMetrics('retrieval'), policy: engine });
    expect(await (await app.request('/ready')).json()).toEqual({ status: 'ready', service: 'retrieval', policy: { revision: 'rev-2' } });
    expect(await (await app.request('/metrics')).text()).toContain('svc_policy_bundle_refusals_total');
  });
});

describe("a token's roles under a bundle engine", () => {
  it('are the roles the bundle in force knows: a role a new bundle adds is honoured once it is taken, without a restart', async () => {
    const server = await bundleServer();
    const issuer = await startTestIssuer();
    const engine = await createBundlePolicyEngine({
      source: openBundleSource(server.url),
      publicKey: createPublicKey(key.publicKeyPem),
      pollSeconds: 3600,
      logger: silent,
      metrics: createPolicyMetrics(),
    });
    try {
      const callers = openCallerResolver({ SVC_AUTH_MODE: 'jwt', SVC_OIDC_ISSUER: issuer.url, SVC_OIDC_AUDIENCE: 'svc' }, engine);
      const token = await issuer.sign({ preferred_username: 'aud', realm_access: { roles: [NEW_ROLE, 'svc-viewer', 'offline_access'] } });
      const caller = () => callers.callerFrom(new Headers({ Authorization: `Bearer ${token}` }));
      const nation = async () => (await engine.decide('tables', { ...(await caller()), table: 'tpch.tiny.nation' })).allow;

      // no bundle yet: the committed build's roles
      expect((await caller()).roles).toEqual(['svc-viewer']);
      server.publish(await sign(await committedBundle('rev-1'), key));
      expect(await engine.poll()).toMatchObject({ outcome: 'activated' });
      expect((await caller()).roles).toEqual(['svc-viewer']);
      expect(await nation()).toBe(false);

      server.publish(await sign(await roleAdded('rev-2'), key));
      expect(await engine.poll()).toEqual({ outcome: 'activated', revision: 'rev-2' });
      expect((await caller()).roles).toEqual([NEW_ROLE, 'svc-viewer']);
      expect(await nation()).toBe(true);
    } finally {
      await engine.close?.();
      await server.close();
      await issuer.close();
    }
  });
});

describe('decision logs', () => {
  let sink: Awaited<ReturnType<typeof collector>>;
  beforeAll(async () => {
    sink = await collector();
  });
  afterAll(() => sink.close());

  it("reach a collector in OPA's shape: gzip'd batches of events with every field and no token", async () => {
    const log = createDecisionLog({ url: sink.url, metrics: createPolicyMetrics(), flushMs: 50 });
    const engine = await createWasmPolicyEngine({ decisionLog: log });
    await inRequest('req-42', () =>
      engine.decide('tables', {
        user: 'ana',
        roles: ['svc-analyst'],
        table: 'tpch.tiny.orders',
        token: 'secret-jwt',
        // a field named __proto__ (as JSON.parse gives it) is logged as a field, not lost as a prototype
        context: { authorization: 'Bearer x', ...JSON.parse('{"__proto__": {"from": "json"}}') },
      }),
    );
    const [event] = await eventually(async () => sink.events.length > 0 && sink.events);
    expect(sink.headers[0]).toMatchObject({ 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(event).toEqual({
      labels: { id: expect.any(String) },
      decision_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      path: 'svc/tables/decision',
      input: { user: 'ana', roles: ['svc-analyst'], table: 'tpch.tiny.orders', context: JSON.parse('{"__proto__": {"from": "json"}}') },
      result: { allow: true, reason: 'allowed: role svc-analyst grants tpch.tiny.orders' },
      bundles: { svc: { revision: engine.revision } },
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      erased: ['/input/token', '/input/context/authorization'],
      request_context: { http: { headers: { 'X-Request-Id': ['req-42'] } } },
    });
    expect(JSON.stringify(sink.events)).not.toMatch(/secret-jwt|Bearer/);
    await engine.close?.();
  });

  it('never hold a decision up while the collector is down: the buffer is bounded and drops are counted', async () => {
    sink.setDown(true);
    const metrics = createPolicyMetrics();
    const engine = await createWasmPolicyEngine({
      decisionLog: createDecisionLog({ url: sink.url, metrics, bufferSize: 10, batchSize: 5, flushMs: 10 }),
    });
    for (let i = 0; i < 50; i++)
      expect((await engine.decide('tables', { user: 'ana', roles: ['svc-analyst'], table: 'tpch.tiny.orders' })).allow).toBe(true);
    expect(await metrics.registry.getSingleMetricAsString('svc_policy_decision_logs_dropped_total')).toMatch(/ 40$/);
    sink.setDown(false);
    await engine.close?.();
  });
});
