import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';
import { createWasmPolicyEngine, DEFAULT_BUILD_DIR, type PolicyEngine } from '../../src/platform/policy/index.ts';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';

// Who may use each service's console is the svc.console decision (policies/svc/console, roles in its data): the
// services ask it where their consoles are served. Its case table is run by tests/unit/policy.test.ts.

/** The committed build with other console roles: the data is not compiled into the wasm, so no opa is needed. */
async function engineWithConsoleRoles(roles: Record<string, string[]>): Promise<PolicyEngine> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-console-policy-'));
  const data = JSON.parse(await readFile(join(DEFAULT_BUILD_DIR, 'data.json'), 'utf8'));
  data.svc.config.console_roles = roles;
  await copyFile(join(DEFAULT_BUILD_DIR, 'policy.wasm'), join(dir, 'policy.wasm'));
  await writeFile(join(dir, 'data.json'), JSON.stringify(data));
  return createWasmPolicyEngine({ buildDir: dir });
}

describe('the explore console', () => {
  let h: ExploreHarness;
  beforeAll(async () => {
    h = await exploreHarness();
  }, 60_000);
  afterAll(() => h?.close());

  it.each([
    ['admin', as.admin, true],
    ['engineer', as.engineer, true],
    ['analyst', as.analyst, true],
    ['user', as.user, true],
    ['viewer', as.viewer, false],
  ] as const)('is offered to the %s as the decision says (GET /me)', async (_, caller, allowed) => {
    const me = await h.call('GET', '/me', caller);
    expect(me).toMatchObject({ status: 200, body: { user: caller.user, roles: [caller.role], console: allowed } });
  });

  it('follows the policy data, not a list in the service', async () => {
    const committed = h.deps.policy;
    try {
      h.deps.policy = await engineWithConsoleRoles({ explore: ['svc-viewer'], retrieval: [] });
      expect((await h.call('GET', '/me', as.viewer)).body.console).toBe(true);
      expect((await h.call('GET', '/me', as.admin)).body.console).toBe(false);
    } finally {
      h.deps.policy = committed;
    }
  });

  it('serves the page to anyone: the page asks /me and disables itself', async () => {
    const res = await h.app.request('/', { headers: { 'X-User-Id': as.viewer.user, 'X-User-Role': as.viewer.role } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('id="no-console"');
  });
});

describe('the retrieval console', () => {
  let h: RetrievalHarness;
  beforeAll(async () => {
    h = await retrievalHarness(await openPglite({}));
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await h?.db.close();
  });

  const page = (headers: Record<string, string>) => h.app.request('/', { headers });

  it('is served without an identity: outside an ingress the page asks for one', async () => {
    const res = await page({});
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
  });

  it.each(['admin', 'engineer', 'analyst', 'user', 'viewer'] as const)('is served to the %s', async (role) => {
    const res = await page({ 'X-User-Id': who[role].user, 'X-User-Role': who[role].roles });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<html');
  });

  it('is refused to a caller without a known role, saying why', async () => {
    const res = await page({ 'X-User-Id': who.stranger.user, 'X-User-Role': who.stranger.roles });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect((await res.json()).detail).toBe('Not allowed to use the retrieval console: denied: unknown role made-up-role');
  });

  it('follows the policy data, not a list in the service', async () => {
    const committed = h.deps.policy;
    try {
      h.deps.policy = await engineWithConsoleRoles({ explore: [], retrieval: ['svc-admin'] });
      expect((await page({ 'X-User-Id': who.admin.user, 'X-User-Role': who.admin.roles })).status).toBe(200);
      const refused = await page({ 'X-Query-User': who.viewer.user, 'X-User-Role': who.viewer.roles });
      expect(refused.status).toBe(403);
      expect((await refused.json()).detail).toContain('the retrieval console is for [svc-admin]');
    } finally {
      h.deps.policy = committed;
    }
  });
});
