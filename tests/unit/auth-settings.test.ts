import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { ProblemError } from '../../src/platform/errors.ts';
import { AuthError, authProblem, authSettings, authShape, claimAt, createCallerResolver } from '../../src/platform/auth/index.ts';

// The settings as a service reads them, the `headers` mode kept as it is, claim paths for other IdPs, and the one
// mapping of auth errors to HTTP pieces.

describe('settings', () => {
  it('defaults to headers mode and the documented claim paths', () => {
    const config = loadConfig(authShape, {});
    expect(config).toMatchObject({
      AUTH_MODE: 'headers',
      AUTH_TOKEN_HEADER: 'X-Auth-Request-Access-Token',
      OIDC_CLOCK_SKEW_SECONDS: 30,
      OIDC_USER_CLAIM: 'preferred_username',
      OIDC_ROLES_CLAIM: 'realm_access.roles',
      OIDC_GROUPS_CLAIM: 'groups',
    });
    expect(authSettings(config)).toEqual({ mode: 'headers', tokenHeader: 'X-Auth-Request-Access-Token' });
  });

  it('jwt mode takes the issuer and audience', () => {
    const config = loadConfig(authShape, {
      SVC_AUTH_MODE: 'jwt',
      SVC_OIDC_ISSUER: 'http://127.0.0.1:18080/realms/svc',
      SVC_OIDC_AUDIENCE: 'svc',
      SVC_OIDC_CLOCK_SKEW_SECONDS: '5',
      SVC_OIDC_ROLES_CLAIM: 'roles',
    });
    expect(authSettings(config)).toMatchObject({
      mode: 'jwt',
      issuer: 'http://127.0.0.1:18080/realms/svc',
      audience: 'svc',
      clockSkewSeconds: 5,
      rolesClaim: 'roles',
      jwksCooldownMs: 30_000,
      jwksMaxAgeMs: 600_000,
    });
  });

  it('jwt mode without issuer and audience stops start-up naming both variables', () => {
    const config = loadConfig(authShape, { SVC_AUTH_MODE: 'jwt' });
    expect(() => authSettings(config)).toThrow(ConfigError);
    expect(() => authSettings(config)).toThrow(/SVC_OIDC_ISSUER and SVC_OIDC_AUDIENCE/);
  });

  it.each([
    [{ SVC_AUTH_MODE: 'oidc' }, /SVC_AUTH_MODE/],
    [{ SVC_OIDC_ISSUER: 'keycloak' }, /SVC_OIDC_ISSUER/],
    [{ SVC_OIDC_CLOCK_SKEW_SECONDS: '-1' }, /SVC_OIDC_CLOCK_SKEW_SECONDS/],
  ])('a bad value names its variable: %o', (env, message) => {
    expect(() => loadConfig(authShape, env)).toThrow(message);
  });
});

describe('headers mode', () => {
  it('keeps today behaviour: the ingress headers name the caller', async () => {
    const resolver = createCallerResolver({ mode: 'headers', tokenHeader: 'X-Auth-Request-Access-Token' }, { knownRoles: () => [] });
    const caller = await resolver.callerFrom(new Headers({ 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst', 'X-User-Groups': 'finance' }));
    expect(caller).toEqual({ user: 'ana', roles: ['svc-analyst'], groups: ['finance'] });
    await expect(resolver.callerFrom(new Headers())).rejects.toBeInstanceOf(ProblemError);
    expect(await resolver.optionalCallerFrom(new Headers())).toBeUndefined();
    expect(await resolver.optionalCallerFrom(new Headers({ 'X-User-Id': 'ana' }))).toMatchObject({ user: 'ana' });
  });
});

describe('claim paths', () => {
  const claims = {
    preferred_username: 'ana',
    realm_access: { roles: ['svc-analyst'] },
    resource_access: { svc: { roles: ['svc-user'] } },
    'https://svc.example/roles': ['svc-viewer'],
    roles: 'svc-admin',
  };
  it.each([
    ['realm_access.roles', ['svc-analyst']],
    ['resource_access.svc.roles', ['svc-user']],
    ['https://svc.example/roles', ['svc-viewer']],
    ['roles', 'svc-admin'],
    ['realm_access.missing', undefined],
    ['preferred_username.length', undefined],
  ])('%s', (path, value) => {
    expect(claimAt(claims, path)).toEqual(value);
  });
});

describe('the HTTP pieces of an auth error', () => {
  const err = (failure: AuthError['failure'], detail: string) => new AuthError(failure, detail);

  it('no token: 401 with the bare RFC 6750 challenge', () => {
    expect(authProblem(err({ kind: 'no_token' }, 'No access token.'))).toEqual({
      status: 401,
      title: 'Unauthorized',
      detail: 'No access token.',
      mlflowCode: 'UNAUTHENTICATED',
      headers: { 'WWW-Authenticate': 'Bearer realm="svc"' },
    });
  });

  it('a bad token: 401 with error="invalid_token" and a description safe to quote', () => {
    const problem = authProblem(err({ kind: 'invalid_token', reason: 'expired' }, 'The "token" expired\\ — get another'));
    expect(problem.status).toBe(401);
    expect(problem.headers['WWW-Authenticate']).toBe(
      'Bearer realm="svc", error="invalid_token", error_description="The  token  expired    get another"',
    );
  });

  it('an unreachable issuer: 503 with Retry-After, MLflow code for the tracker', () => {
    const problem = authProblem(err({ kind: 'issuer_unavailable' }, 'The identity provider could not be reached.'));
    expect(problem).toMatchObject({ status: 503, mlflowCode: 'TEMPORARILY_UNAVAILABLE', headers: { 'Retry-After': '5' } });
  });
});
