import { execFileSync } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError, authProblem, createTokenVerifier, type TokenVerifier } from '../../src/platform/auth/index.ts';
import { launchBrowser } from '../support/browser.ts';
import { passwordToken, signInWithKeycloak, startAuthProxy, startKeycloak, stopAuthProxy, type RealmUser } from '../support/keycloak.ts';
import { oidcSettings } from '../support/oidc-issuer.ts';

// The sign-in chain with the real parts: Keycloak issues the tokens, the platform's verifier checks them through
// the realm's discovery document, and nginx doing forward auth to oauth2-proxy passes the signed-in user, groups
// and access token to an upstream, here a small server that shows the headers it received.

const KNOWN_ROLES = ['svc-admin', 'svc-engineer', 'svc-analyst', 'svc-user', 'svc-viewer'];
// Its own ports, apart from the chain scripts/integration.sh starts in front of the services (18480).
const BASE = Number(process.env.SVC_IT_AUTH_ECHO_PORT ?? 18580);
let issuer: string;
let verifier: TokenVerifier;
let upstream: Server;
let browser: Browser;

type Echo = { service: string; url: string; headers: IncomingHttpHeaders };

beforeAll(async () => {
  issuer = startKeycloak();
  verifier = createTokenVerifier({ settings: oidcSettings(issuer), knownRoles: () => KNOWN_ROLES });
  upstream = createServer((req, res) => {
    const echo: Echo = { service: req.headers.host ?? '', url: req.url ?? '', headers: req.headers };
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><pre id="echo">${JSON.stringify(echo).replace(/&/g, '&amp;').replace(/</g, '&lt;')}</pre>`);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const at = `127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  startAuthProxy(BASE, issuer, { retrieval: at, explore: at, tracker: at, runtime: at });
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  stopAuthProxy(BASE);
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('tokens Keycloak issues', () => {
  it.each([
    ['ana', { user: 'ana', roles: ['svc-analyst'], groups: ['finance'] }],
    ['eve', { user: 'eve', roles: ['svc-engineer'], groups: ['data'] }],
    ['uma', { user: 'uma', roles: ['svc-user'], groups: ['finance', 'ops'] }],
  ] as const)('verify through the realm discovery document and name %s', async (user, expected) => {
    const token = await passwordToken(issuer, user);
    const caller = await verifier.verify(token);
    expect(caller).toEqual({ ...expected, token });
  });

  it('a Keycloak token with a changed payload is refused', async () => {
    const [header, payload, signature] = (await passwordToken(issuer, 'ana')).split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    claims.realm_access = { roles: ['svc-admin'] };
    const forged = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    await expect(verifier.verify(forged)).rejects.toMatchObject({ failure: { kind: 'invalid_token', reason: 'bad_signature' } });
  });

  it('a Keycloak token past its exp and the skew is refused with the RFC 6750 challenge', async () => {
    const token = await passwordToken(issuer, 'ana');
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    const later = createTokenVerifier({ settings: oidcSettings(issuer), knownRoles: () => KNOWN_ROLES, now: () => (exp + 31) * 1000 });
    const err = await later.verify(token).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthError);
    const problem = authProblem(err as AuthError);
    expect(problem.status).toBe(401);
    expect(problem.headers['WWW-Authenticate']).toMatch(
      /^Bearer realm="svc", error="invalid_token", error_description="The access token expired at/,
    );
  });
});

describe('nginx forward auth to oauth2-proxy', () => {
  const entry = (offset: number, path = '/') => `http://127.0.0.1:${BASE + offset}${path}`;

  it('sends a request without a session to the sign-in at Keycloak', async () => {
    const res = await fetch(entry(0, '/collections?limit=5&x=1'), { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(`${issuer}/protocol/openid-connect/auth`);
    expect(location.searchParams.get('client_id')).toBe('svc');
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('redirect_uri')).toBe(entry(0, '/oauth2/callback'));
  });

  async function signedInEcho(user: RealmUser): Promise<{ echo: Echo; page: import('playwright-core').Page }> {
    const context = await browser.newContext();
    // A client's own identity headers must not reach the service.
    await context.setExtraHTTPHeaders({ 'X-User-Id': 'ada', 'X-User-Role': 'svc-admin', 'X-Query-User': 'ada' });
    const page = await context.newPage();
    await page.goto(entry(0, '/console/?tab=collections&page=2'));
    expect(page.url().startsWith(`${issuer}/protocol/openid-connect/auth`)).toBe(true);
    expect(await page.title()).toMatch(/svc/i);
    await signInWithKeycloak(page, issuer, user);
    expect(page.url()).toBe(entry(0, '/console/?tab=collections&page=2'));
    return { echo: JSON.parse((await page.textContent('#echo'))!) as Echo, page };
  }

  it.each([
    ['ana', 'svc-analyst', 'finance'],
    ['eve', 'svc-engineer', 'data'],
  ] as const)('after %s signs in at Keycloak the upstream receives user, groups and access token', async (user, role, group) => {
    const { echo, page } = await signedInEcho(user);
    expect(echo.url).toBe('/console/?tab=collections&page=2');
    const h = echo.headers;
    expect(h['x-auth-request-preferred-username']).toBe(user);
    expect(h['x-auth-request-email']).toBe(`${user}@svc.test`);
    expect(h['x-auth-request-user']).toMatch(/^[0-9a-f-]{36}$/); // Keycloak's subject id
    expect(h['x-auth-request-groups']).toBe(group);
    expect(h['x-user-id']).toBe(user);
    expect(h['x-user-role']).toBeUndefined();
    expect(h['x-query-user']).toBeUndefined();
    const token = h['x-auth-request-access-token'] as string;
    expect(h['x-user-token']).toBe(token);
    expect(await verifier.verify(token)).toMatchObject({ user, roles: [role], groups: [group] });

    // One sign-in serves every service port: the cookie belongs to the host, not the port.
    await page.goto(entry(1, '/explore/'));
    const explore = JSON.parse((await page.textContent('#echo'))!) as Echo;
    expect(explore.service).toBe(`127.0.0.1:${BASE + 1}`);
    expect(explore.headers['x-auth-request-preferred-username']).toBe(user);
    await page.context().close();
  });

  it('lets an API client through with its own bearer token from the realm, and not with a forged one', async () => {
    const token = await passwordToken(issuer, 'uma');
    const ok = await fetch(entry(2, '/api/2.0/mlflow/experiments/search'), { headers: { Authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    const echo = JSON.parse(
      (await ok.text())
        .match(/<pre id="echo">(.*)<\/pre>/s)![1]!
        .replace(/&lt;/g, '<')
        .replace(/&amp;/g, '&'),
    ) as Echo;
    expect(echo.headers['x-auth-request-preferred-username']).toBe('uma');
    expect(echo.headers['x-auth-request-access-token']).toBe(token);
    expect(echo.headers.authorization).toBe(`Bearer ${token}`);

    const forged = await fetch(entry(2, '/api/2.0/mlflow/experiments/search'), {
      headers: { Authorization: `Bearer ${token.slice(0, -4)}AAAA` },
      redirect: 'manual',
    });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toMatch(/^Bearer realm="svc", error="invalid_token"/);
    expect(forged.headers.get('content-type')).toBe('application/problem+json');
    expect((await forged.json()).detail).toMatch(/refused the bearer token/);
  });

  it('refuses an expired bearer token from the realm with a 401, where a browser would be sent to sign in', async () => {
    const token = await passwordToken(issuer, 'uma', 'svc-cli-expiring');
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp * 1000 - Date.now()) + 1500));
    const res = await fetch(entry(2, '/api/2.0/mlflow/experiments/search'), {
      headers: { Authorization: `Bearer ${token}` },
      redirect: 'manual',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });
});
