import type { Hono } from 'hono';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCallerResolver } from '../../src/platform/auth/index.ts';
import { oidcSettings, startTestIssuer, whoamiService, type TestIssuer, type TestKey } from '../support/oidc-issuer.ts';

// The verifier behind a tiny service, over HTTP as a service will use it: each bad token is a 401 with the RFC 6750
// challenge, a good one names the caller from its claims only.

const KNOWN_ROLES = ['svc-admin', 'svc-engineer', 'svc-analyst', 'svc-user', 'svc-viewer'];
let issuer: TestIssuer;
let app: Hono;
const clock = Date.now();
const extraKeys: Partial<Record<'ES256' | 'EdDSA', TestKey>> = {};

beforeAll(async () => {
  issuer = await startTestIssuer();
  // Published before the first request: a key added later waits for the cooldown (auth-keys.test.ts).
  extraKeys.ES256 = await issuer.addKey('ES256');
  extraKeys.EdDSA = await issuer.addKey('EdDSA');
  const resolver = createCallerResolver({ mode: 'jwt', ...oidcSettings(issuer.url) }, { knownRoles: () => KNOWN_ROLES, now: () => clock });
  app = whoamiService(resolver);
});
afterAll(() => issuer.close());

const ask = async (headers: Record<string, string>) => app.request('/whoami', { headers });
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('a token that fails a check is a 401 with an invalid_token challenge', () => {
  const seconds = () => Math.floor(clock / 1000);
  const cases: [string, () => Promise<string>, RegExp][] = [
    [
      'signed by a key the issuer does not publish',
      async () => issuer.sign({}, { key: await issuer.addKey('RS256', { publish: false }) }),
      /key "key-\d+" the identity provider does not publish/,
    ],
    [
      'alg none',
      async () => new UnsecuredJWT({ iss: issuer.url, aud: 'svc', preferred_username: 'ada', exp: seconds() + 300 }).encode(),
      /algorithm is not accepted/,
    ],
    [
      'HS256 whose secret is the public key',
      async () =>
        new SignJWT({ iss: issuer.url, aud: 'svc', preferred_username: 'ada', exp: seconds() + 300 })
          .setProtectedHeader({ alg: 'HS256', kid: issuer.keys[0]!.kid })
          .sign(new TextEncoder().encode(await issuer.publicPem())),
      /algorithm is not accepted/,
    ],
    ['RS384, outside the accepted list', async () => issuer.sign({}, { key: await issuer.addKey('RS384') }), /algorithm is not accepted/],
    ['from another issuer', () => issuer.sign({ iss: 'http://127.0.0.1:1/realms/other' }), /not issued by/],
    ['for another audience', () => issuer.sign({ aud: ['account', 'other-app'] }), /not meant for "svc"/],
    ['without an audience', () => issuer.sign({ aud: undefined }), /not meant for "svc"/],
    ['expired beyond the 30 s skew', () => issuer.sign({ iat: seconds() - 400, exp: seconds() - 31 }), /expired at/],
    ['without exp', () => issuer.sign({ exp: undefined }), /never expire/],
    ['not yet valid', () => issuer.sign({ nbf: seconds() + 60 }), /not valid before/],
    ['without the user claim', () => issuer.sign({ preferred_username: undefined }), /no "preferred_username" claim/],
    ['with an empty user claim', () => issuer.sign({ preferred_username: '  ' }), /no "preferred_username" claim/],
    [
      'with a tampered payload',
      async () => {
        const [h, , s] = (await issuer.sign()).split('.');
        const forged = Buffer.from(
          JSON.stringify({
            iss: issuer.url,
            aud: 'svc',
            preferred_username: 'ada',
            realm_access: { roles: ['svc-admin'] },
            exp: seconds() + 300,
          }),
        ).toString('base64url');
        return `${h}.${forged}.${s}`;
      },
      /signature does not verify/,
    ],
    ['that is not a JWT', async () => 'not-a-token', /not a well-formed signed JWT/],
  ];

  it.each(cases)('%s', async (_name, token, detail) => {
    const res = await ask(bearer(await token()));
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="svc", error="invalid_token", error_description="[^"]+"$/);
    const body = await res.json();
    expect(body).toMatchObject({ status: 401, title: 'Unauthorized', requestId: 'req-1' });
    expect(body.detail).toMatch(detail);
  });

  it('no token, even with X-User-Id and X-User-Role, is a 401 with the bare challenge', async () => {
    const res = await ask({ 'X-User-Id': 'ada', 'X-User-Role': 'svc-admin', 'X-Query-User': 'ada' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="svc"');
    expect((await res.json()).detail).toMatch(/No access token/);
  });
});

describe('a good token names the caller', () => {
  it('takes user, known roles and groups from the claims, and keeps the token', async () => {
    const token = await issuer.sign({
      preferred_username: 'eve',
      realm_access: { roles: ['svc-engineer', 'offline_access', 'uma_authorization', 'svc-root'] },
      groups: ['data', 'ops'],
    });
    const res = await ask(bearer(token));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ user: 'eve', roles: ['svc-engineer'], groups: ['data', 'ops'], tokenLength: token.length });
  });

  it('expired within the skew still verifies', async () => {
    const seconds = Math.floor(clock / 1000);
    const res = await ask(bearer(await issuer.sign({ iat: seconds - 300, exp: seconds - 10 })));
    expect(res.status).toBe(200);
  });

  it('never lets X-User-Id, X-User-Role, X-User-Groups or X-Query-User override the token', async () => {
    const res = await ask({
      ...bearer(await issuer.sign()),
      'X-User-Id': 'ada',
      'X-User-Role': 'svc-admin',
      'X-User-Groups': 'platform',
      'X-Query-User': 'ada',
    });
    expect(await res.json()).toMatchObject({ user: 'ana', roles: ['svc-analyst'], groups: ['finance'] });
  });

  it.each(['ES256', 'EdDSA'] as const)('verifies %s', async (alg) => {
    const res = await ask(bearer(await issuer.sign({ preferred_username: 'uma' }, { key: extraKeys[alg] })));
    expect(res.status).toBe(200);
    expect((await res.json()).user).toBe('uma');
  });
});

describe('a service that also serves calls without identity (the tracker)', () => {
  it('no token is no caller; a good token names one; a bad one is still a 401', async () => {
    const resolver = createCallerResolver(
      { mode: 'jwt', ...oidcSettings(issuer.url) },
      { knownRoles: () => KNOWN_ROLES, now: () => clock },
    );
    expect(await resolver.optionalCallerFrom(new Headers({ 'X-User-Id': 'ada' }))).toBeUndefined();
    const token = await issuer.sign({ preferred_username: 'uma', realm_access: { roles: ['svc-user'] } });
    expect(await resolver.optionalCallerFrom(new Headers({ Authorization: `Bearer ${token}` }))).toMatchObject({
      user: 'uma',
      roles: ['svc-user'],
    });
    await expect(resolver.optionalCallerFrom(new Headers({ Authorization: `Bearer ${token}x` }))).rejects.toMatchObject({
      failure: { kind: 'invalid_token', reason: 'bad_signature' },
    });
    // credentials that are there are checked as callerFrom checks them: a Basic header is not "no identity"
    await expect(resolver.optionalCallerFrom(new Headers({ Authorization: 'Basic YWRhOnB3' }))).rejects.toMatchObject({
      failure: { kind: 'invalid_token', reason: 'not_bearer' },
    });
  });
});

describe('where the token comes from', () => {
  const tokens = async () => ({
    authorization: await issuer.sign({ preferred_username: 'ada' }),
    userToken: await issuer.sign({ preferred_username: 'eve' }),
    proxied: await issuer.sign({ preferred_username: 'vic' }),
  });

  it('Authorization: Bearer first, then X-User-Token, then the proxy header', async () => {
    const t = await tokens();
    const all = { ...bearer(t.authorization), 'X-User-Token': t.userToken, 'X-Auth-Request-Access-Token': t.proxied };
    expect((await (await ask(all)).json()).user).toBe('ada');
    const { Authorization: _, ...noBearer } = all;
    expect((await (await ask(noBearer)).json()).user).toBe('eve');
    expect((await (await ask({ 'X-Auth-Request-Access-Token': t.proxied })).json()).user).toBe('vic');
  });

  it('an Authorization header in another scheme is refused, not passed over for the next source; the scheme is case-blind', async () => {
    const t = await tokens();
    const res = await ask({ Authorization: 'Basic YWRhOnB3', 'X-Auth-Request-Access-Token': t.proxied });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token", error_description="[^"]*\bBasic\b/);
    expect(await ask({ authorization: `bearer ${t.userToken}` }).then((r) => r.json())).toMatchObject({ user: 'eve' });
  });

  it('an empty X-User-Token is no token, and the proxy header counts', async () => {
    const t = await tokens();
    expect(await ask({ 'X-User-Token': ' ', 'X-Auth-Request-Access-Token': t.proxied }).then((r) => r.json())).toMatchObject({
      user: 'vic',
    });
  });

  it('a bad token in a stronger source is refused, not passed over for a good one in a weaker source', async () => {
    const t = await tokens();
    const res = await ask({ ...bearer(`${t.authorization}x`), 'X-Auth-Request-Access-Token': t.proxied });
    expect(res.status).toBe(401);
  });
});
