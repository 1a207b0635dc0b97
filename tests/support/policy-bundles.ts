import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { assembleBundle, packSignedBundle, type Bundle } from '../../src/platform/policy/bundle.ts';
import { DEFAULT_BUILD_DIR } from '../../src/platform/policy/wasm.ts';
import { writeTarGz, readTarGz } from '../../src/platform/policy/tar.ts';
import { decisionsWithCases } from './policy-cases.ts';

// Signed policy bundles for tests, made from the committed build and the policies beside it (no opa needed), and
// the published change the tests roll out: svc-analyst loses tpch.tiny.partsupp (data and case table together).

export type KeyPair = { privateKeyPem: string; publicKeyPem: string };

export function keyPair(kind: 'rsa' | 'ec' = 'rsa'): KeyPair {
  const pair =
    kind === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    privateKeyPem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export const committedBundle = (revision: string): Promise<Bundle> =>
  assembleBundle({
    buildDir: DEFAULT_BUILD_DIR,
    policiesDir: new URL('../../policies', import.meta.url).pathname,
    decisions: decisionsWithCases(),
    revision,
  });

export const LOST_TABLE = 'tpch.tiny.partsupp';

/** The committed bundle with svc-analyst's exception widened to LOST_TABLE, and its case flipped to match. */
export async function analystLosesTable(revision: string): Promise<Bundle> {
  const bundle = await committedBundle(revision);
  const data = JSON.parse(text(bundle.files.get('data.json')!)) as {
    svc: { config: { table_grants: { role_exceptions: Record<string, string[]> } } };
  };
  data.svc.config.table_grants.role_exceptions['svc-analyst']!.push(LOST_TABLE);
  bundle.files.set('data.json', bytes(JSON.stringify(data, null, 1)));
  const cases = JSON.parse(text(bundle.files.get('svc/tables/cases.json')!)) as { cases: { name: string; allow: boolean }[] };
  for (const c of cases.cases) if (c.name === 'analyst reads tiny partsupp') c.allow = false;
  bundle.files.set('svc/tables/cases.json', bytes(JSON.stringify(cases)));
  return bundle;
}

export const NEW_ROLE = 'svc-auditor';

/** The committed bundle with one more known role, NEW_ROLE, granted the nation table only. */
export async function roleAdded(revision: string): Promise<Bundle> {
  const bundle = await committedBundle(revision);
  const data = JSON.parse(text(bundle.files.get('data.json')!)) as {
    svc: { config: { known_roles: string[]; table_grants: { roles: Record<string, string[]> } } };
  };
  data.svc.config.known_roles.push(NEW_ROLE);
  data.svc.config.table_grants.roles[NEW_ROLE] = ['tpch.tiny.nation'];
  bundle.files.set('data.json', bytes(JSON.stringify(data, null, 1)));
  return bundle;
}

export const sign = (bundle: Bundle, key: KeyPair, keyId = 'svc'): Promise<Uint8Array> =>
  packSignedBundle(bundle, { privateKeyPem: key.privateKeyPem, keyId });

/** A signed archive with one file's bytes changed after signing. */
export function tampered(archive: Uint8Array, name: string, change: (b: Uint8Array) => Uint8Array): Uint8Array {
  const files = readTarGz(archive, 1 << 26);
  files.set(name, change(files.get(name)!));
  return writeTarGz(files);
}

export const text = (b: Uint8Array): string => new TextDecoder().decode(b);
export const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

/** A plain HTTP server that serves whatever archive it holds now, with an ETag and 304 on If-None-Match. */
export async function bundleServer(): Promise<{
  url: string;
  publish(archive: Uint8Array): void;
  requests: { etag?: string | undefined; status: number }[];
  close(): Promise<void>;
}> {
  let current: Uint8Array | undefined;
  let version = 0;
  const requests: { etag?: string | undefined; status: number }[] = [];
  const server: Server = createServer((req, res) => {
    const etag = `"v${version}"`;
    const asked = req.headers['if-none-match'];
    const status = !current ? 404 : asked === etag ? 304 : 200;
    requests.push({ etag: asked, status });
    if (status !== 200) return void res.writeHead(status, { ETag: etag }).end();
    res.writeHead(200, { 'Content-Type': 'application/gzip', ETag: etag, 'Content-Length': current!.length }).end(current);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bundles/svc.tar.gz`,
    publish(archive) {
      current = archive;
      version++;
    },
    requests,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** A decision-log collector in the shape of OPA's API: POST a gzip'd JSON array; `down` answers 503. */
export async function collector(): Promise<{
  url: string;
  events: Record<string, unknown>[];
  headers: Record<string, string | string[] | undefined>[];
  setDown(down: boolean): void;
  close(): Promise<void>;
}> {
  const events: Record<string, unknown>[] = [];
  const headers: Record<string, string | string[] | undefined>[] = [];
  let down = false;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (down) return void res.writeHead(503).end();
      headers.push(req.headers);
      events.push(...(JSON.parse(gunzipSync(Buffer.concat(chunks)).toString()) as Record<string, unknown>[]));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/logs`,
    events,
    headers,
    setDown: (d) => (down = d),
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** Waits until `check` holds, polling; the deadline is a bound, not an assertion on speed. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const got = await check();
    if (got) return got;
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
