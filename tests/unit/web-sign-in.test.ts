import { readFileSync } from 'node:fs';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExploreApp } from '../../src/explore/service.ts';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import type { AppEnv } from '../../src/platform/http.ts';
import { createRetrievalApp } from '../../src/retrieval/service.ts';
import { exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { retrievalHarness, type RetrievalHarness } from '../support/retrieval.ts';

// The two routes behind every console's sign-in box, through HTTP: GET /ui/roles (svc dev only) lists the roles of the
// policy deciding now, and GET /ui/me says who the request's identity is, which the header shows behind an ingress.

let db: Database;
let retrieval: RetrievalHarness;
let explore: ExploreHarness;
const POLICY_ROLES: string[] = JSON.parse(readFileSync('policies/data.json', 'utf8')).svc.config.known_roles;

beforeAll(async () => {
  db = await openPglite({});
  [retrieval, explore] = await Promise.all([retrievalHarness(db), exploreHarness()]);
});
afterAll(async () => {
  await Promise.all([retrieval?.close(), explore?.close()]);
  await db?.close();
});

type Build = (opts: { devIdentity: boolean; knownRoles?: () => string[] }) => Hono<AppEnv>;
const services: [string, Build][] = [
  [
    'retrieval',
    ({ devIdentity, knownRoles }) =>
      createRetrievalApp(knownRoles ? { ...retrieval.deps, policy: { ...retrieval.deps.policy, knownRoles } } : retrieval.deps, {
        devIdentity,
      }),
  ],
  [
    'explore',
    ({ devIdentity, knownRoles }) =>
      createExploreApp(knownRoles ? { ...explore.deps, policy: { ...explore.deps.policy, knownRoles } } : explore.deps, { devIdentity }),
  ],
];

describe.each(services)('the %s console', (_name, build) => {
  it('lists the roles of the policy data under svc dev, with no identity needed', async () => {
    const res = await build({ devIdentity: true }).request('/ui/roles');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ roles: POLICY_ROLES });
  });

  it('lists the roles of the policy deciding now, not a list of its own', async () => {
    const res = await build({ devIdentity: true, knownRoles: () => ['svc-admin', 'svc-auditor'] }).request('/ui/roles');
    expect(await res.json()).toEqual({ roles: ['svc-admin', 'svc-auditor'] });
  });

  it('has no roles route under svc serve, where the ingress says who calls', async () => {
    expect((await build({ devIdentity: false }).request('/ui/roles')).status).toBe(404);
  });

  it.each([true, false])('says who the identity of the request is (svc dev: %s)', async (devIdentity) => {
    const app = build({ devIdentity });
    const me = await app.request('/ui/me', { headers: { 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst,svc-user' } });
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ user: 'ana', roles: ['svc-analyst', 'svc-user'], groups: [] });
    const nobody = await app.request('/ui/me');
    expect(nobody.status).toBe(200);
    expect(await nobody.json()).toEqual({ user: null, roles: [], groups: [] });
  });
});
