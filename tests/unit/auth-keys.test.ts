import { afterEach, describe, expect, it } from 'vitest';
import { createCallerResolver, type OidcSettings } from '../../src/platform/auth/index.ts';
import { oidcSettings, startTestIssuer, whoamiService, type TestIssuer } from '../support/oidc-issuer.ts';

// The issuer's keys over real HTTP: fetched once and cached, a key published later accepted without a restart,
// unknown kids unable to make the service hammer the issuer, and an unreachable issuer a 503.

const KNOWN_ROLES = ['svc-admin', 'svc-engineer', 'svc-analyst', 'svc-user', 'svc-viewer'];
const issuers: TestIssuer[] = [];
afterEach(async () => {
  await Promise.all(issuers.splice(0).map((i) => i.close().catch(() => {})));
});

async function setup(overrides: Partial<OidcSettings> = {}) {
  const issuer = await startTestIssuer();
  issuers.push(issuer);
  const clock = { now: Date.now() };
  const resolver = createCallerResolver(
    { mode: 'jwt', ...oidcSettings(issuer.url, overrides) },
    { knownRoles: () => KNOWN_ROLES, now: () => clock.now },
  );
  const app = whoamiService(resolver);
  const ask = async (token?: string) => app.request('/whoami', { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  return { issuer, clock, resolver, ask, sign: (claims = {}, opts = {}) => issuer.sign(claims, { now: clock.now, ...opts }) };
}

describe('the key set', () => {
  it('is fetched once for many requests', async () => {
    const { issuer, ask, sign } = await setup();
    const token = await sign();
    for (let i = 0; i < 20; i++) expect((await ask(token)).status).toBe(200);
    expect(issuer.fetches).toEqual({ discovery: 1, jwks: 1 });
  });

  it('takes a key the issuer publishes later without a restart, once the cooldown has passed', async () => {
    const { issuer, clock, ask, sign } = await setup();
    expect((await ask(await sign())).status).toBe(200);
    const rotated = await issuer.addKey('RS256');
    // Within the cooldown of the last fetch the new kid is not looked up yet.
    clock.now += 5_000;
    expect((await ask(await sign({}, { key: rotated }))).status).toBe(401);
    clock.now += 30_000;
    const res = await ask(await sign({ preferred_username: 'eve' }, { key: rotated }));
    expect(res.status).toBe(200);
    expect((await res.json()).user).toBe('eve');
    expect(issuer.fetches.jwks).toBe(2);
  });

  it('stops accepting a key the issuer removed once the cached set is older than its maximum age', async () => {
    const { issuer, clock, ask, sign } = await setup({ jwksMaxAgeMs: 60_000 });
    const old = issuer.keys[0]!;
    expect((await ask(await sign())).status).toBe(200);
    await issuer.addKey('RS256');
    issuer.keys = issuer.keys.filter((k) => k !== old);
    clock.now += 61_000;
    const res = await ask(await sign({}, { key: old }));
    expect(res.status).toBe(401);
    expect((await res.json()).detail).toMatch(/does not publish/);
  });

  it('re-checks a token it verified before once the key that signed it is withdrawn', async () => {
    const { issuer, clock, ask, sign } = await setup({ jwksMaxAgeMs: 60_000 });
    const old = issuer.keys[0]!;
    const token = await sign({}, { key: old });
    expect((await ask(token)).status).toBe(200);
    expect((await ask(token)).status).toBe(200);
    const next = await issuer.addKey('RS256');
    issuer.keys = [next];
    // A token with the new kid refetches the set after the cooldown; the one signed with the withdrawn key fails.
    clock.now += 31_000;
    expect((await ask(await sign({}, { key: next }))).status).toBe(200);
    expect((await ask(token)).status).toBe(401);
  });

  it('re-checks a token it verified before once the cached set is older than its maximum age', async () => {
    const { issuer, clock, ask, sign } = await setup({ jwksMaxAgeMs: 60_000 });
    const token = await sign({ exp: Math.floor(clock.now / 1000) + 3600 });
    expect((await ask(token)).status).toBe(200);
    issuer.keys = [await issuer.addKey('RS256', { publish: false })];
    clock.now += 61_000;
    expect((await ask(token)).status).toBe(401);
  });

  it('a token it verified before expires like any other', async () => {
    const { clock, ask, sign } = await setup();
    const token = await sign({ exp: Math.floor(clock.now / 1000) + 60 });
    expect((await ask(token)).status).toBe(200);
    clock.now += 60_000 + 31_000;
    const res = await ask(token);
    expect(res.status).toBe(401);
    expect((await res.json()).detail).toMatch(/expired at/);
  });

  it('a burst of 1 000 requests with unknown kids fetches the key set at most once per cooldown', async () => {
    const { issuer, clock, resolver, ask, sign } = await setup();
    expect(await resolver.warm()).toBe(true);
    // The kid is looked up before the signature is checked, so a made-up kid needs no real signature.
    const payload = (await sign()).split('.')[1];
    const burst = async () => {
      const tokens = Array.from({ length: 1000 }, (_, i) => {
        const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: `made-up-${i}-${Math.random()}` })).toString('base64url');
        return `${header}.${payload}.c2lnbmF0dXJl`;
      });
      const statuses = await Promise.all(tokens.map(async (t) => (await ask(t)).status));
      expect(new Set(statuses)).toEqual(new Set([401]));
    };
    await burst(); // within the cooldown of the warm-up fetch: no fetch at all
    expect(issuer.fetches.jwks).toBe(1);
    clock.now += 31_000;
    await burst(); // the cooldown has passed: one fetch, shared by every request of the burst
    expect(issuer.fetches.jwks).toBe(2);
    clock.now += 10_000;
    await burst();
    expect(issuer.fetches.jwks).toBe(2);
    clock.now += 21_000;
    await burst();
    expect(issuer.fetches.jwks).toBe(3);
  });
});

describe('an issuer that cannot be reached', () => {
  it('is a 503 while the service has no keys, and the service recovers when it is back', async () => {
    const { issuer, clock, resolver, ask, sign } = await setup();
    issuer.failWith = 500;
    expect(await resolver.warm()).toBe(false);
    const token = await sign();
    const res = await ask(token);
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('retry-after')).toBe('5');
    expect((await res.json()).detail).toMatch(/answered 500 for its discovery document/);
    issuer.failWith = undefined;
    clock.now += 1_000;
    expect((await ask(token)).status).toBe(200);
  });

  it('is a 503 when nothing listens at its address', async () => {
    const { issuer, ask, sign } = await setup();
    const token = await sign();
    await issuer.close();
    const res = await ask(token);
    expect(res.status).toBe(503);
    expect((await res.json()).detail).toMatch(/could not be reached/);
  });

  it('leaves keys already fetched in use (a stale set still verifies)', async () => {
    const { issuer, clock, ask, sign } = await setup({ jwksMaxAgeMs: 60_000 });
    expect((await ask(await sign())).status).toBe(200);
    issuer.failWith = 503;
    clock.now += 120_000;
    expect((await ask(await sign())).status).toBe(200);
  });

  it('a token is still refused before any key is needed: no token is a 401, not a 503', async () => {
    const { issuer, ask } = await setup();
    issuer.failWith = 500;
    expect((await ask()).status).toBe(401);
  });
});

it('a discovery document that names another issuer is refused with the setting to check', async () => {
  const { issuer, sign } = await setup();
  // Configured with a trailing slash the provider's own document does not have: OIDC Discovery wants them identical.
  const resolver = createCallerResolver({ mode: 'jwt', ...oidcSettings(`${issuer.url}/`) }, { knownRoles: () => KNOWN_ROLES });
  const res = await whoamiService(resolver).request('/whoami', { headers: { Authorization: `Bearer ${await sign()}` } });
  expect(res.status).toBe(503);
  expect((await res.json()).detail).toMatch(/names the issuer .* check SVC_OIDC_ISSUER/);
});
