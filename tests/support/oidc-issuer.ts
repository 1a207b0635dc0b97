import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { AuthError, authProblemResponse, type CallerResolver, type OidcSettings } from '../../src/platform/auth/index.ts';

// A tiny OpenID provider over real HTTP for the verifier's tests and benchmark: a discovery document, a key set
// whose keys a test can add or replace, counters of what was fetched, and a switch that makes it fail.

export type SigningAlg = 'RS256' | 'ES256' | 'EdDSA' | 'RS384';
export type TestKey = { kid: string; alg: SigningAlg; privateKey: CryptoKey; publicKey: CryptoKey; jwk: JWK };

export type TestIssuer = {
  url: string;
  /** The published keys (the first signs by default). */
  keys: TestKey[];
  fetches: { discovery: number; jwks: number };
  /** When set, every request is answered with this status instead. */
  failWith: number | undefined;
  /** A new key pair; published unless `publish` is false (a key an attacker holds). */
  addKey(alg?: SigningAlg, opts?: { publish?: boolean; kid?: string }): Promise<TestKey>;
  /** A signed token with sane defaults (iss, aud svc, a user, five minutes of validity); `claims` override them. */
  sign(claims?: JWTPayload, opts?: { key?: TestKey; header?: Record<string, unknown>; now?: number }): Promise<string>;
  publicPem(key?: TestKey): Promise<string>;
  close(): Promise<void>;
};

let counter = 0;

export async function startTestIssuer(): Promise<TestIssuer> {
  let published: TestKey[] = [];
  const fetches = { discovery: 0, jwks: 0 };
  const state = { failWith: undefined as number | undefined };
  const server: Server = createServer((req, res) => {
    if (state.failWith !== undefined) {
      res.writeHead(state.failWith).end();
      return;
    }
    if (req.url === '/.well-known/openid-configuration') {
      fetches.discovery += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/protocol/openid-connect/certs` }));
    } else if (req.url === '/protocol/openid-connect/certs') {
      fetches.jwks += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: published.map((k) => k.jwk) }));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function addKey(alg: SigningAlg = 'RS256', opts: { publish?: boolean; kid?: string } = {}): Promise<TestKey> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const kid = opts.kid ?? `key-${++counter}`;
    const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
    const key = { kid, alg, privateKey, publicKey, jwk };
    if (opts.publish !== false) published = [...published, key];
    return key;
  }

  const issuer: TestIssuer = {
    url,
    get keys() {
      return published;
    },
    set keys(keys: TestKey[]) {
      published = keys;
    },
    fetches,
    get failWith() {
      return state.failWith;
    },
    set failWith(status: number | undefined) {
      state.failWith = status;
    },
    addKey,
    async sign(claims = {}, opts = {}) {
      const key = opts.key ?? published[0];
      if (!key) throw new Error('the test issuer has no key');
      const now = Math.floor((opts.now ?? Date.now()) / 1000);
      const payload: JWTPayload = {
        iss: url,
        aud: 'svc',
        azp: 'svc-cli',
        sub: 'f2a6c1de-0000-4000-8000-000000000001',
        preferred_username: 'ana',
        realm_access: { roles: ['svc-analyst'] },
        groups: ['finance'],
        iat: now,
        exp: now + 300,
        ...claims,
      };
      return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...opts.header }).sign(key.privateKey);
    },
    publicPem: (key) => exportSPKI((key ?? published[0]!).publicKey),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  await addKey('RS256');
  return issuer;
}

/** The platform's defaults (docs/auth.md) for an issuer; `overrides` change single settings. */
export const oidcSettings = (issuer: string, overrides: Partial<OidcSettings> = {}): OidcSettings => ({
  issuer,
  audience: 'svc',
  clockSkewSeconds: 30,
  userClaim: 'preferred_username',
  rolesClaim: 'realm_access.roles',
  groupsClaim: 'groups',
  tokenHeader: 'X-Auth-Request-Access-Token',
  jwksCooldownMs: 30_000,
  jwksMaxAgeMs: 600_000,
  tokenCacheSize: 10_000,
  ...overrides,
});

/** A one-route service that answers with its caller, mapping auth errors the way every service does. */
export function whoamiService(resolver: CallerResolver): Hono {
  const service = new Hono();
  service.get('/whoami', async (c) => {
    try {
      const { token, ...caller } = await resolver.callerFrom(c.req.raw.headers);
      return c.json({ ...caller, tokenLength: token?.length ?? 0 });
    } catch (err) {
      if (err instanceof AuthError) return authProblemResponse(err, 'req-1');
      throw err;
    }
  });
  return service;
}
