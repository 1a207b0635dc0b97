import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCallerResolver, type CallerResolver } from '../../src/platform/auth/index.ts';
import { openPglite } from '../../src/platform/db/index.ts';
import { runtimeHarness, type RuntimeHarness } from '../support/dashboards.ts';
import { exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { oidcSettings, startTestIssuer, type TestIssuer } from '../support/oidc-issuer.ts';
import { retrievalHarness, type RetrievalHarness } from '../support/retrieval.ts';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// SVC_AUTH_MODE=jwt in every service, through each one's own HTTP interface: the caller is the verified token's
// and nothing else; no token or a bad one is a 401 with the RFC 6750 challenge (problem+json, or MLflow's error in
// the tracker); the issuer out of reach is a 503; /health stays open. The tracker also serves calls without any
// identity (inside the cluster), and records the signed-in user when there is one.

const KNOWN_ROLES = ['svc-admin', 'svc-engineer', 'svc-analyst', 'svc-user', 'svc-viewer'];
let issuer: TestIssuer;
let callers: CallerResolver;
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const tokenOf = (user: string, role: string, claims: Record<string, unknown> = {}) =>
  issuer.sign({ preferred_username: user, realm_access: { roles: [role] }, ...claims });

beforeAll(async () => {
  issuer = await startTestIssuer();
  callers = createCallerResolver({ mode: 'jwt', ...oidcSettings(issuer.url) }, { knownRoles: () => KNOWN_ROLES });
});
afterAll(() => issuer.close());

// An Authorization header that is there but holds no usable bearer token: refused with a detail naming what is wrong,
// never passed over for the good token in X-User-Token or the proxy header that every case also carries.
const UNUSABLE_AUTHORIZATION: [string, string, RegExp][] = [
  ['empty', '', /Authorization header is empty/],
  ['Bearer with no token', 'Bearer', /says "Bearer" but carries no token/],
  ['Bearer and spaces', 'Bearer   ', /says "Bearer" but carries no token/],
  ['Basic', 'Basic YWRhOnB3', /uses the "Basic" scheme/],
  ['another scheme', 'Negotiate YIIGhgYGKwYBBQUCoIIGejCCBn', /uses the "Negotiate" scheme/],
  ['Bearer with two words', 'Bearer abc def', /more than one word after "Bearer"/],
  ['Bearer with a malformed token', 'Bearer abc"def,', /characters a token cannot have/],
];
const withWeakerTokens = (authorization: string, token: string) => ({
  Authorization: authorization,
  'X-User-Token': token,
  'X-Auth-Request-Access-Token': token,
});

const expectChallenge = (res: Response, error?: 'invalid_token') => {
  expect(res.status).toBe(401);
  const challenge = res.headers.get('www-authenticate') ?? '';
  expect(challenge).toMatch(/^Bearer realm="svc"/);
  if (error) expect(challenge).toContain(`error="${error}"`);
  else expect(challenge).not.toContain('error=');
};

describe('retrieval in jwt mode', () => {
  let h: RetrievalHarness;
  beforeAll(async () => {
    h = await retrievalHarness(await openPglite({}), { callers });
  }, 60_000);
  afterAll(() => h.close());

  it('takes the caller from the token only: X-User-Id without one is a 401, with one it changes nothing', async () => {
    expectChallenge(await h.app.request('/collections', { headers: { 'X-User-Id': 'ada', 'X-User-Role': 'svc-admin' } }));
    const engineer = await tokenOf('eve', 'svc-engineer');
    const created = await h.app.request('/collections', {
      method: 'POST',
      headers: { ...bearer(engineer), 'X-User-Id': 'ada', 'X-User-Role': 'svc-admin', 'Content-Type': 'application/json' },
      body: JSON.stringify({ slug: 'eng', name: 'Engineering', allowed_roles: ['svc-engineer'] }),
    });
    expect(created.status).toBe(201);
    // an analyst's token with an administrator's headers is still an analyst: the collection is not theirs to see
    const analyst = await tokenOf('ana', 'svc-analyst');
    const listed = await h.app.request('/collections', { headers: { ...bearer(analyst), 'X-User-Id': 'ada', 'X-User-Role': 'svc-admin' } });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(await listed.json())).not.toContain('"eng"');
  });

  it('answers an expired token, a foreign one and none with 401 problem+json, and keeps /health open', async () => {
    const expired = await tokenOf('eve', 'svc-engineer', { exp: Math.floor(Date.now() / 1000) - 3600 });
    const res = await h.app.request('/collections', { headers: bearer(expired) });
    expectChallenge(res, 'invalid_token');
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(((await res.json()) as { detail: string }).detail).toMatch(/expired/);
    const foreign = await issuer.sign({}, { key: await issuer.addKey('RS256', { publish: false }) });
    expectChallenge(await h.app.request('/collections', { headers: bearer(foreign) }), 'invalid_token');
    expectChallenge(await h.app.request('/collections'));
    expect((await h.app.request('/health')).status).toBe(200);
  });

  it('takes the token from the forward-auth proxy header as from Authorization', async () => {
    const res = await h.app.request('/collections', { headers: { 'X-Auth-Request-Access-Token': await tokenOf('eve', 'svc-engineer') } });
    expect(res.status).toBe(200);
  });

  it.each(UNUSABLE_AUTHORIZATION)(
    'refuses an Authorization header that is %s, on the API and the console',
    async (_, authorization, detail) => {
      const headers = withWeakerTokens(authorization, await tokenOf('eve', 'svc-engineer'));
      for (const path of ['/collections', '/']) {
        const res = await h.app.request(path, { headers });
        expectChallenge(res, 'invalid_token');
        expect(((await res.json()) as { detail: string }).detail).toMatch(detail);
      }
    },
  );
});

describe('explore in jwt mode', () => {
  let h: ExploreHarness;
  beforeAll(async () => {
    h = await exploreHarness({}, { callers });
  }, 60_000);
  afterAll(() => h.close());

  it("names the token's user and roles, dropping roles the platform does not know", async () => {
    const token = await issuer.sign({
      preferred_username: 'uma',
      realm_access: { roles: ['svc-user', 'realm-admin'] },
      groups: ['finance'],
    });
    const res = await h.app.request('/me', { headers: { ...bearer(token), 'X-User-Id': 'ada', 'X-User-Role': 'svc-admin' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ user: 'uma', roles: ['svc-user'], groups: ['finance'] });
  });

  it.each(UNUSABLE_AUTHORIZATION)('refuses an Authorization header that is %s', async (_, authorization, detail) => {
    const res = await h.app.request('/me', { headers: withWeakerTokens(authorization, await tokenOf('uma', 'svc-user')) });
    expectChallenge(res, 'invalid_token');
    expect(res.headers.get('www-authenticate')).toMatch(/error_description="[^"]+"$/);
    expect(((await res.json()) as { detail: string }).detail).toMatch(detail);
  });

  it('refuses a question without a token, and one whose token has no user claim', async () => {
    const ask = (headers: Record<string, string>) =>
      h.app.request('/query', {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ question: 'how many nations' }),
      });
    expectChallenge(await ask({ 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst' }));
    const nameless = await issuer.sign({ preferred_username: undefined });
    const res = await ask(bearer(nameless));
    expectChallenge(res, 'invalid_token');
    expect(((await res.json()) as { detail: string }).detail).toContain('preferred_username');
  });

  it('documents the bearer token as the only way in, every operation but the open ones', async () => {
    const doc = (await (await h.app.request('/openapi.json')).json()) as {
      security: unknown[];
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    expect(doc.security).toEqual([{ bearer: [] }]);
    const ways = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.security ?? doc.security));
    expect(new Set(ways.map((w) => JSON.stringify(w)))).toEqual(new Set([JSON.stringify([{ bearer: [] }])]));
  });
});

describe('an issuer out of reach', () => {
  it('is a 503 with Retry-After while keys are needed, never a 500, and the service answers again once it is back', async () => {
    const unreachable = await startTestIssuer();
    const resolver = createCallerResolver(
      { mode: 'jwt', ...oidcSettings(unreachable.url, { jwksCooldownMs: 1 }) },
      { knownRoles: () => KNOWN_ROLES },
    );
    const h = await retrievalHarness(await openPglite({}), { callers: resolver });
    try {
      const token = await unreachable.sign({ preferred_username: 'eve', realm_access: { roles: ['svc-engineer'] } });
      unreachable.failWith = 500;
      const res = await h.app.request('/collections', { headers: bearer(token) });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
      unreachable.failWith = undefined;
      // after a failure the keys are asked for again once a short back-off has passed
      await expect
        .poll(async () => (await h.app.request('/collections', { headers: bearer(token) })).status, { timeout: 10_000 })
        .toBe(200);
    } finally {
      await h.close();
      await unreachable.close();
    }
  }, 60_000);
});

describe('the tracker in jwt mode', () => {
  let t: TrackerHarness;
  beforeAll(async () => {
    t = await trackerHarness({ deps: { callers } });
  });
  afterAll(() => t.close());

  const createRun = (headers: Record<string, string>) =>
    t.app.request('/api/2.0/mlflow/runs/create', {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ experiment_id: '0', user_id: 'laptop-user', tags: [{ key: 'mlflow.user', value: 'laptop-user' }] }),
    });

  it("records the token's user on a run, whatever the client says", async () => {
    const res = await createRun(bearer(await tokenOf('eve', 'svc-engineer')));
    expect(res.status).toBe(200);
    const { run } = (await res.json()) as { run: { info: { user_id: string }; data: { tags: { key: string; value: string }[] } } };
    expect(run.info.user_id).toBe('eve');
    expect(run.data.tags).toContainEqual({ key: 'mlflow.user', value: 'eve' });
  });

  it('serves a call with no identity as before (inside the cluster)', async () => {
    const res = await createRun({});
    expect(res.status).toBe(200);
    expect(((await res.json()) as { run: { info: { user_id: string } } }).run.info.user_id).toBe('laptop-user');
  });

  it.each(UNUSABLE_AUTHORIZATION)(
    'refuses an Authorization header that is %s, alone or beside a good token in a weaker source',
    async (_, authorization, detail) => {
      for (const headers of [{ Authorization: authorization }, withWeakerTokens(authorization, await tokenOf('eve', 'svc-engineer'))]) {
        const res = await createRun(headers);
        expectChallenge(res, 'invalid_token');
        const body = (await res.json()) as { error_code: string; message: string };
        expect(body.error_code).toBe('UNAUTHENTICATED');
        expect(body.message).toMatch(detail);
      }
    },
  );

  it("refuses an expired token with MLflow's UNAUTHENTICATED and the challenge", async () => {
    const expired = await tokenOf('eve', 'svc-engineer', { exp: Math.floor(Date.now() / 1000) - 3600 });
    const res = await createRun(bearer(expired));
    expectChallenge(res, 'invalid_token');
    expect(await res.json()).toMatchObject({ error_code: 'UNAUTHENTICATED' });
  });

  it('records the signed-in user on a model version', async () => {
    const token = await tokenOf('eve', 'svc-engineer');
    const post = (path: string, body: unknown) =>
      t.app.request(`/api/2.0/mlflow/${path}`, {
        method: 'POST',
        headers: { ...bearer(token), 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post('registered-models/create', { name: 'churn' })).status).toBe(200);
    const res = await post('model-versions/create', { name: 'churn', source: 's3://models/churn/1' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model_version: { user_id: string } }).model_version.user_id).toBe('eve');
  });
});

describe('the dashboards runtime in jwt mode', () => {
  let h: ExploreHarness;
  let runtime: RuntimeHarness;
  let id: string;
  let owner: string;
  beforeAll(async () => {
    h = await exploreHarness({}, { callers });
    runtime = await runtimeHarness(h, { callers });
    owner = await tokenOf('ana', 'svc-analyst');
    const res = await h.app.request('/query', {
      method: 'POST',
      headers: { ...bearer(owner), 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: 'how many orders are there' }),
    });
    expect(res.status).toBe(200);
    id = ((await res.json()) as { dashboard_id: string }).dashboard_id;
  }, 60_000);
  afterAll(async () => {
    await runtime?.close();
    await h?.close();
  });

  const open = (headers: Record<string, string>) => runtime.app.request(`/d/${id}`, { headers });

  it("opens the owner's dashboard for the owner's token, with no session cookie", async () => {
    const res = await open(bearer(owner));
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('refuses headers without a token, another user, and a session cookie', async () => {
    expectChallenge(await open({ 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst' }));
    expect((await open(bearer(await tokenOf('vic', 'svc-viewer')))).status).toBe(403);
    expect((await open({ Cookie: 'svc_dashboard_session=anything' })).status).toBe(401);
  });

  it.each(UNUSABLE_AUTHORIZATION)('refuses an Authorization header that is %s', async (_, authorization, detail) => {
    const res = await open(withWeakerTokens(authorization, owner));
    expectChallenge(res, 'invalid_token');
    expect(((await res.json()) as { detail: string }).detail).toMatch(detail);
  });

  it('documents the bearer token alone, not the session cookie it does not read', async () => {
    const doc = (await (await runtime.app.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    expect(doc.paths['/d/{id}']!.get!.security).toEqual([{ bearer: [] }]);
  });
});
