import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, openSharedParts, type Launched } from '../../src/platform/launcher.ts';
import { createS3Store, type ObjectStore } from '../../src/platform/objects/index.ts';
import { createSidecarPolicyEngine } from '../../src/platform/policy/index.ts';
import type { ServiceDefinition, SharedParts } from '../../src/platform/service.ts';
import { exploreService } from '../../src/explore/service.ts';
import { retrievalService } from '../../src/retrieval/service.ts';
import { dashboardsRuntimeService } from '../../dashboards-runtime/src/service.ts';
import { freePort } from '../support/free-port.ts';
import { policyCaseSuite } from '../support/policy-cases.ts';
import {
  analystLosesTable,
  bundleServer,
  bytes,
  committedBundle,
  eventually,
  keyPair,
  LOST_TABLE,
  sign,
  tampered,
} from '../support/policy-bundles.ts';
import { createTestBucket, S3_TEST } from '../support/s3.ts';

// One signed bundle, published on MinIO (s3://) and on a plain HTTP server, read by three services each polling on
// its own (as three processes would) and by a real OPA configured with OPA's own `bundles` and `keys`. A published
// change reaches all of them without a restart; a tampered bundle, one signed by another key and one whose Rego does
// not load are refused by all of them while the previous decisions stand.

const key = keyPair('rsa');
const otherKey = keyPair('rsa');
const analyst = { 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst' };
const POLL = 1;

let bucket: Awaited<ReturnType<typeof createTestBucket>>;
let store: ObjectStore;
let http: Awaited<ReturnType<typeof bundleServer>>;
let opa: ChildProcess | undefined;
let opaUrl = '';
const started: { launched: Launched[]; shared: SharedParts }[] = [];
const urls: Record<string, string> = {};

async function publish(archive: Uint8Array) {
  await store.put('bundles/svc.tar.gz', archive);
  http.publish(archive);
}

async function start(service: ServiceDefinition, bundleUrl: string) {
  const env = {
    SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-bundle-')),
    SVC_LOG_LEVEL: 'silent',
    SVC_POLICY_BUNDLE_URL: bundleUrl,
    SVC_POLICY_BUNDLE_PUBLIC_KEY: key.publicKeyPem,
    SVC_POLICY_POLL_SECONDS: String(POLL),
    SVC_POLICY_BUNDLE_S3_ENDPOINT_URL: S3_TEST.endpoint,
    SVC_OBJSTORE_ACCESS_KEY_ID: S3_TEST.accessKeyId,
    SVC_OBJSTORE_SECRET_ACCESS_KEY: S3_TEST.secretAccessKey,
    SVC_DASHBOARD_HMAC_KEY: 'bundle-test-key',
    SVC_EXPLORE_URL: urls.explore ?? 'http://127.0.0.1:1',
  };
  const shared = await openSharedParts(env, { embedded: false, inMemory: true });
  const launched = await launch([service], env, shared, { portOverride: 0, hostname: '127.0.0.1' });
  started.push({ launched, shared });
  urls[service.name] = launched[0]!.url;
}

const revisionOf = async (service: string) =>
  ((await (await fetch(`${urls[service]}/ready`)).json()) as { policy?: { revision?: string } }).policy?.revision;

async function analystMayRead(): Promise<boolean> {
  const res = await fetch(`${urls.explore}/query`, {
    method: 'POST',
    headers: { ...analyst, 'Content-Type': 'application/json' },
    body: JSON.stringify({ question: 'how many partsupp rows are there', execute: false }),
  });
  const body = (await res.json()) as { reasoning?: { allowed_tables?: string[] } };
  return res.status === 200 && (body.reasoning?.allowed_tables ?? []).includes(LOST_TABLE);
}

const opaDecides = async (input: object) =>
  (
    (await (await fetch(`${opaUrl}/v1/data/svc/tables/decision`, { method: 'POST', body: JSON.stringify({ input }) })).json()) as {
      result?: { allow?: boolean };
    }
  ).result;
const opaRevision = async () =>
  ((await (await fetch(`${opaUrl}/v1/data/system/bundles/svc/manifest/revision`)).json()) as { result?: string }).result;

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-opa.sh']);
  bucket = await createTestBucket('policy-bundles');
  store = createS3Store({ ...S3_TEST, bucket: bucket.bucket });
  http = await bundleServer();
  await publish(await sign(await committedBundle('rev-1'), key));

  // The real OPA, configured as the prod overlay's sidecar is: OPA's `bundles` polling a service, and `keys`.
  const dir = mkdtempSync(join(tmpdir(), 'svc-opa-bundle-'));
  writeFileSync(join(dir, 'key.pem'), key.publicKeyPem);
  writeFileSync(
    join(dir, 'config.yaml'),
    [
      'services:',
      '  bundles:',
      `    url: ${http.url.replace(/\/bundles\/svc\.tar\.gz$/, '')}`,
      'bundles:',
      '  svc:',
      '    service: bundles',
      '    resource: bundles/svc.tar.gz',
      '    polling: {min_delay_seconds: 1, max_delay_seconds: 1}',
      '    signing: {keyid: svc}',
      'keys:',
      '  svc:',
      '    algorithm: RS256',
      '    key: |',
      ...key.publicKeyPem
        .trim()
        .split('\n')
        .map((l) => `      ${l}`),
      '',
    ].join('\n'),
  );
  const port = await freePort();
  opaUrl = `http://127.0.0.1:${port}`;
  opa = spawn(
    join(process.env.HOME ?? '', '.cache/svc/bin/opa'),
    [
      'run',
      '--server',
      `--addr=127.0.0.1:${port}`,
      '--skip-version-check',
      '--log-level=error',
      `--config-file=${join(dir, 'config.yaml')}`,
    ],
    { stdio: 'ignore' },
  );
  await eventually(async () => (await fetch(`${opaUrl}/health?bundles`).catch(() => undefined))?.ok);

  await start(exploreService, `s3://${bucket.bucket}/bundles/svc.tar.gz`);
  await start(retrievalService, http.url);
  await start(dashboardsRuntimeService, `s3://${bucket.bucket}/bundles/svc.tar.gz`);
}, 600_000);

afterAll(async () => {
  for (const s of started) {
    await Promise.all(s.launched.map((l) => l.close()));
    await s.shared.policy.close?.();
    await s.shared.db.close();
  }
  opa?.kill();
  await http?.close();
  await bucket?.drop();
});

describe('a signed bundle published on MinIO and on a plain HTTP server', () => {
  it('is in force on retrieval, explore, the runtime and the OPA sidecar', async () => {
    for (const service of ['explore', 'retrieval', 'dashboards-runtime']) expect(await revisionOf(service)).toBe('rev-1');
    expect(await opaRevision()).toBe('rev-1');
    expect(await analystMayRead()).toBe(true);
    expect(await opaDecides({ user: 'ana', roles: ['svc-analyst'], table: LOST_TABLE })).toMatchObject({ allow: true });
  });

  it('a published change (svc-analyst loses a table) is in force everywhere within one poll, with no restart', async () => {
    await publish(await sign(await analystLosesTable('rev-2'), key));
    // One poll interval plus the time a poll takes: nothing restarts, each poller picks the bundle up.
    await eventually(
      async () => {
        const revisions = await Promise.all(['explore', 'retrieval', 'dashboards-runtime'].map(revisionOf));
        return revisions.every((r) => r === 'rev-2') && (await opaRevision()) === 'rev-2';
      },
      (POLL + 4) * 1000,
    );
    expect(await analystMayRead()).toBe(false);
    expect(await opaDecides({ user: 'ana', roles: ['svc-analyst'], table: LOST_TABLE })).toMatchObject({ allow: false });
  });

  it.each([
    [
      'tampered after signing',
      async () =>
        tampered(await sign(await committedBundle('rev-bad'), key), 'data.json', (b) =>
          bytes(new TextDecoder().decode(b).replace('"svc-viewer": []', '"svc-viewer": ["*"]')),
        ),
    ],
    ['signed by another key', async () => sign(await committedBundle('rev-bad'), otherKey)],
    [
      'whose Rego does not load',
      async () => {
        const b = await committedBundle('rev-bad');
        b.files.set(
          'svc/tables/tables.rego',
          bytes('package svc.tables\n\ndecision := {"allow": true, "reason": "allowed: everything"} if {\n'),
        );
        b.files.set('policy.wasm', bytes('\0asm broken'));
        return sign(b, key);
      },
    ],
  ])('a bundle %s is refused by every reader while the old decisions stand', async (_, make) => {
    await publish(await make());
    // Long enough for several polls of every reader to have fetched it and refused it.
    await new Promise((r) => setTimeout(r, (POLL * 3 + 1) * 1000));
    for (const service of ['explore', 'retrieval', 'dashboards-runtime']) expect(await revisionOf(service)).toBe('rev-2');
    expect(await opaRevision()).toBe('rev-2');
    expect(await analystMayRead()).toBe(false);
    expect(await opaDecides({ user: 'vic', roles: ['svc-viewer'], table: 'tpch.tiny.orders' })).toMatchObject({ allow: false });
    const metrics = await (await fetch(`${urls.explore}/metrics`)).text();
    expect(metrics).toMatch(/svc_policy_bundle_refusals_total\{stage="(verify|load)"\} [1-9]/);
  });
});

describe('the real OPA on the same signed bundle', () => {
  beforeAll(async () => {
    await publish(await sign(await committedBundle('rev-3'), key));
    await eventually(async () => (await opaRevision()) === 'rev-3');
  }, 30_000);

  // The sidecar adapter over OPA's bundle: the same case tables as the wasm, so both decide identically.
  policyCaseSuite('OPA on the signed bundle', () => createSidecarPolicyEngine({ url: opaUrl }));
});
