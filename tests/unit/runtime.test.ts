import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAGE_BYTES, pageDigest } from '../../src/platform/dashboard-pages.ts';
import { signDashboard } from '../../src/platform/dashboard-signature.ts';
import { readObject } from '../../src/platform/objects/index.ts';
import { runtimeHarness, SHARING_PEOPLE, VISIBILITIES, viewMatrix, type RuntimeHarness } from '../support/dashboards.ts';
import { exploreHarness, type ExploreHarness, type ExploreIdentity } from '../support/explore.ts';

// The dashboards runtime through HTTP in front of the real explore: explore decides access, the signature is checked
// at launch, and every (viewer, dashboard) pair gets a sandbox process of its own. The runtime's workspace tests the
// sandbox's walls and its side of the launch contract on their own (dashboards-runtime/tests).
const people = SHARING_PEOPLE;

describe('dashboards runtime', () => {
  let h: ExploreHarness;
  let runtime: RuntimeHarness;
  const ids: Record<string, string> = {};
  let keys = { current: 'test-key', old: undefined as string | undefined };

  const open = (id: string, who?: ExploreIdentity, cookie?: string) =>
    runtime.app.request(`/d/${id}`, {
      headers: {
        ...(who ? { 'X-User-Id': who.user, 'X-User-Role': who.role, ...(who.groups ? { 'X-User-Groups': who.groups } : {}) } : {}),
        ...(cookie ? { Cookie: cookie } : {}),
      },
    });

  beforeAll(async () => {
    h = await exploreHarness();
    runtime = await runtimeHarness(h, { keys: () => keys });
    for (const v of VISIBILITIES) {
      // force: one dashboard per visibility, of the same question (the planner answers it exactly, with no suffix)
      const q = await h.ask(people.owner, { question: 'how many orders are there', force: true });
      ids[v] = q.body.dashboard_id;
      await h.call('PATCH', `/dashboards/${ids[v]}/share`, people.owner, {
        visibility: v,
        allowed_users: ['luke'],
        allowed_groups: ['finance'],
      });
    }
  }, 60_000);
  afterAll(async () => {
    await runtime.close();
    await h.close();
  });

  it.each(viewMatrix())('opens for %s a %s dashboard: %s', async (who, v, allow) => {
    const res = await open(ids[v]!, people[who]);
    expect(res.status).toBe(allow ? 200 : 403);
    if (allow) expect(await res.text()).toContain('15000');
  });

  it('refuses a viewer without identity, and accepts the session cookie it issued', async () => {
    expect((await open(ids.public!)).status).toBe(401);
    const first = await open(ids.public!, people.other);
    const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
    expect(cookie).toMatch(/^svc_dashboard_session=/);
    expect((await open(ids.public!, undefined, cookie)).status).toBe(200);
    expect((await open(ids.public!, undefined, 'svc_dashboard_session=forged.token.value')).status).toBe(401);
  });

  it('sends every page with a strict CSP that admits its own stylesheet by hash and nothing else, nosniff, and no framing', async () => {
    const q = await h.ask(people.owner, { question: 'how many customers are there per nation', force: true });
    await h.call('PATCH', `/dashboards/${q.body.dashboard_id}/share`, people.owner, { visibility: 'public' });
    for (const id of [ids.public!, q.body.dashboard_id]) {
      const res = await open(id, people.other);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      const csp = res.headers.get('content-security-policy') ?? '';
      const directives = new Map(
        csp
          .split(';')
          .map((d) => d.trim().split(/\s+/))
          .map(([name, ...values]) => [name!, values]),
      );
      expect(directives.get('default-src')).toEqual(["'none'"]);
      expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
      expect(directives.get('base-uri')).toEqual(["'none'"]);
      expect(directives.get('form-action')).toEqual(["'none'"]);
      expect(csp).not.toMatch(/unsafe-|\*|https?:|data:/);
      // The page needs exactly what the policy admits: its one inline stylesheet (by hash), no script, no style
      // attribute, no outside resource. A renderer that adds one fails here rather than in a viewer's browser.
      const page = await res.text();
      const styles = [...page.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
      expect(styles).toHaveLength(1);
      const hash = `'sha256-${createHash('sha256').update(styles[0]!).digest('base64')}'`;
      // the stylesheet of today's pages first, then those of pages published before its last change, each by hash
      expect(directives.get('style-src')?.[0]).toBe(hash);
      for (const source of directives.get('style-src') ?? []) expect(source).toMatch(/^'sha256-[A-Za-z0-9+/]+=*'$/);
      expect(page).not.toMatch(/<script|<link|<img|<iframe|\sstyle=|\son[a-z]+=|\s(href|src)=/i);
    }
    expect(await (await open(q.body.dashboard_id, people.other)).text()).toContain('<svg');
  });

  it('gives two viewers two sandbox processes, and one viewer the same one again', async () => {
    const a = (await open(ids.public!, people.owner)).headers.get('x-sandbox-pid');
    const b = (await open(ids.public!, people.admin)).headers.get('x-sandbox-pid');
    const a2 = (await open(ids.public!, people.owner)).headers.get('x-sandbox-pid');
    expect(a).toBeTruthy();
    expect(b).toBeTruthy();
    expect(a).not.toBe(b);
    expect(a2).toBe(a);
  });

  // The page store as an attacker with write access to it would change it.
  const pageOf = async (id: string) => {
    // the page is stored after POST /query answers: the launch answer (an administrator may open any) waits for it
    expect((await h.call('GET', `/dashboards/${id}/launch`, people.admin)).body.allow).toBe(true);
    return (await readObject(h.deps.pages, `${id}.html`, MAX_PAGE_BYTES))!.toString('utf8');
  };
  const replacePage = (id: string, text: string) => h.deps.pages.put(`${id}.html`, Buffer.from(text));

  it('refuses a page changed by one byte, even when the digest explore keeps is changed with it', async () => {
    const q = await h.ask(people.owner, { question: 'how many parts are there', force: true });
    const changed = (await pageOf(q.body.dashboard_id)).replace('2000', '2001');
    await replacePage(q.body.dashboard_id, changed);
    const res = await open(q.body.dashboard_id, people.owner);
    expect(res.status).toBe(403);
    expect((await res.json()).detail).toMatch(/not the one explore published/);
    await h.db.query('UPDATE explore_dashboards SET digest = $2 WHERE id = $1', [q.body.dashboard_id, pageDigest(changed)]);
    const again = await open(q.body.dashboard_id, people.owner);
    expect(again.status).toBe(403);
    expect((await again.json()).detail).toMatch(/signature does not verify/);
  });

  it("refuses an administrator's private page copied over a public dashboard's (the signature names its dashboard)", async () => {
    const secret = await h.ask(people.admin, { question: 'top 3 customer by account balance', force: true });
    expect(await pageOf(secret.body.dashboard_id)).toContain('Customer#');
    const copied = await pageOf(secret.body.dashboard_id);
    await replacePage(ids.public!, copied);
    await h.db.query('UPDATE explore_dashboards SET digest = $2 WHERE id = $1', [ids.public, pageDigest(copied)]);
    const res = await open(ids.public!, people.listed);
    expect(res.status).toBe(403);
    expect(await res.text()).not.toContain('Customer#');
  });

  it('accepts the previous key during a rotation, and only then', async () => {
    const q = await h.ask(people.owner, { question: 'how many regions are there', force: true });
    const id = q.body.dashboard_id as string;
    keys = { current: 'new-key', old: 'test-key' };
    expect((await open(id, people.owner)).status).toBe(200);
    keys = { current: 'new-key', old: undefined };
    expect((await open(id, people.owner)).status).toBe(403);
    const resigned = signDashboard((await pageOf(id)).split('\n').slice(1).join('\n'), 'new-key', { id, owner: people.owner.user });
    await replacePage(id, resigned);
    await h.db.query('UPDATE explore_dashboards SET digest = $2 WHERE id = $1', [id, pageDigest(resigned)]);
    expect((await open(id, people.owner)).status).toBe(200);
    keys = { current: 'test-key', old: undefined };
  });

  it('answers 404 for a dashboard that does not exist or was deleted', async () => {
    expect((await open('no-such-dashboard', people.admin)).status).toBe(404);
    const q = await h.ask(people.owner, { question: 'how many nations are there', force: true });
    await h.call('DELETE', `/dashboards/${q.body.dashboard_id}`, people.owner);
    expect((await open(q.body.dashboard_id, people.owner)).status).toBe(404);
  });
});

// Sandboxes are bounded in all and per viewer; the longest-idle one makes room, and when every one is serving a
// request a newcomer is told to come back (503, Retry-After) instead of another process starting.
describe('dashboards runtime: a bounded sandbox pool', () => {
  let h: ExploreHarness;
  const ids: string[] = [];
  const viewer = (n: number): ExploreIdentity => ({ user: `viewer-${n}`, role: 'svc-analyst' });
  const openAs = (runtime: RuntimeHarness, id: string, who: ExploreIdentity) =>
    runtime.app.request(`/d/${id}`, { headers: { 'X-User-Id': who.user, 'X-User-Role': who.role } });

  beforeAll(async () => {
    h = await exploreHarness();
    for (const question of ['how many orders are there', 'how many parts are there', 'how many regions are there']) {
      const q = await h.ask(people.owner, { question, force: true });
      await h.call('PATCH', `/dashboards/${q.body.dashboard_id}/share`, people.owner, {
        visibility: 'public',
        allowed_users: [],
        allowed_groups: [],
      });
      ids.push(q.body.dashboard_id);
    }
  }, 60_000);
  afterAll(() => h.close());

  it('never runs more than SVC_SANDBOX_MAX sandboxes, however many viewers come', async () => {
    const runtime = await runtimeHarness(h, { limits: { max: 3, maxPerUser: 2 } });
    try {
      const pids = new Set<string>();
      for (let n = 0; n < 8; n++) {
        const res = await openAs(runtime, ids[0]!, viewer(n));
        expect(res.status).toBe(200);
        pids.add(res.headers.get('x-sandbox-pid')!);
        expect(runtime.pool.size).toBeLessThanOrEqual(3);
      }
      expect(pids.size).toBe(8);
    } finally {
      await runtime.close();
    }
  });

  it('keeps at most SVC_SANDBOX_MAX_PER_USER for one viewer, the longest idle making room', async () => {
    const runtime = await runtimeHarness(h, { limits: { max: 10, maxPerUser: 2 } });
    try {
      const first = await openAs(runtime, ids[0]!, viewer(1));
      for (const id of ids.slice(1)) expect((await openAs(runtime, id, viewer(1))).status).toBe(200);
      expect(runtime.pool.size).toBe(2);
      // the first was the longest idle: it went, so opening it again starts a new process
      const again = await openAs(runtime, ids[0]!, viewer(1));
      expect(again.headers.get('x-sandbox-pid')).not.toBe(first.headers.get('x-sandbox-pid'));
    } finally {
      await runtime.close();
    }
  });

  it('answers 503 with Retry-After when every sandbox is serving a request', async () => {
    const runtime = await runtimeHarness(h, { limits: { max: 1, maxPerUser: 1 } });
    try {
      const [a, b] = await Promise.all([openAs(runtime, ids[0]!, viewer(1)), openAs(runtime, ids[0]!, viewer(2))]);
      const statuses = [a.status, b.status].sort();
      expect(statuses).toEqual([200, 503]);
      const refused = a.status === 503 ? a : b;
      expect(refused.headers.get('retry-after')).toBe('5');
      expect((await refused.json()).detail).toMatch(/SVC_SANDBOX_MAX/);
      expect(runtime.pool.size).toBe(1);
    } finally {
      await runtime.close();
    }
  });
});
