import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntimeApp } from '../../dashboards-runtime/src/app.ts';
import { createSandboxPool } from '../../dashboards-runtime/src/pool.ts';
import { createProcessLauncher } from '../../dashboards-runtime/src/sandbox/launcher.ts';
import { createSessions } from '../../dashboards-runtime/src/viewer.ts';
import { MAX_PAGE_BYTES, pageDigest } from '../../src/platform/dashboard-pages.ts';
import { signDashboard } from '../../src/platform/dashboard-signature.ts';
import { createLogger } from '../../src/platform/log.ts';
import { createMetrics } from '../../src/platform/metrics.ts';
import { readObject } from '../../src/platform/objects/index.ts';
import { runtimeHarness, SHARING_PEOPLE, type RuntimeHarness } from '../support/dashboards.ts';
import { exploreHarness, type ExploreHarness, type ExploreIdentity } from '../support/explore.ts';

// Dashboards of several cards through HTTP, explore's side (POST /dashboards: only one's own dashboards, 2 to 12)
// and the runtime's (the page's signature and each card's own, for its dashboard and owner), and the runtime's home
// page, which lists what explore's policy lets the viewer open.
const people = SHARING_PEOPLE;

describe('dashboards of cards', () => {
  let h: ExploreHarness;
  let runtime: RuntimeHarness;
  const own: string[] = [];
  let others: string;
  let privateOfOthers: string;

  const headers = (who?: ExploreIdentity): Record<string, string> =>
    who ? { 'X-User-Id': who.user, 'X-User-Role': who.role, ...(who.groups ? { 'X-User-Groups': who.groups } : {}) } : {};
  const open = (path: string, who?: ExploreIdentity) => runtime.app.request(path, { headers: headers(who) });
  const build = (who: ExploreIdentity, ids: string[], title = 'Customers and orders') =>
    h.call('POST', '/dashboards', who, { title, cards: ids.map((dashboard_id) => ({ dashboard_id })) });
  const publish = async (who: ExploreIdentity, question: string) => {
    const q = await h.ask(who, { question, force: true });
    expect(q.status).toBe(200);
    return q.body.dashboard_id as string;
  };
  // the page store as an attacker with write access to it (and to the digest explore keeps) would change it
  const pageOf = async (id: string) => (await readObject(h.deps.pages, `${id}.html`, MAX_PAGE_BYTES))!.toString('utf8');
  const replacePage = async (id: string, text: string) => {
    await h.deps.pages.put(`${id}.html`, Buffer.from(text));
    await h.db.query('UPDATE explore_dashboards SET digest = $2 WHERE id = $1', [id, pageDigest(text)]);
  };
  const bodyOf = (page: string) => page.slice(page.indexOf('\n') + 1);

  beforeAll(async () => {
    h = await exploreHarness();
    runtime = await runtimeHarness(h);
    own.push(await publish(people.owner, 'how many customers are there per nation'));
    own.push(await publish(people.owner, 'how many orders are there'));
    others = await publish(people.other, 'how many parts are there');
    await h.call('PATCH', `/dashboards/${others}/share`, people.other, { visibility: 'public' });
    privateOfOthers = await publish(people.other, 'how many regions are there');
  }, 90_000);
  afterAll(async () => {
    await runtime.close();
    await h.close();
  });

  it('builds a dashboard of two of my dashboards; the list counts its cards; the runtime shows both cards', async () => {
    const res = await build(people.owner, own);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      owner: people.owner.user,
      title: 'Customers and orders',
      cards: 2,
      chart: null,
      visibility: 'private',
    });
    const mine = (await h.call('GET', '/dashboards?scope=mine', people.owner)).body.dashboards as { id: string; cards: number }[];
    expect(mine.find((d) => d.id === res.body.id)?.cards).toBe(2);
    expect(mine.find((d) => d.id === own[0])?.cards).toBe(0);

    const page = await open(`/d/${res.body.id}`, people.owner);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html.match(/<iframe class="card" sandbox=""/g)).toHaveLength(2);
    for (const id of own) expect(html).toContain(`data-dashboard="${id}"`);
    expect(html).toContain('&lt;svg role=&quot;img&quot;'); // the first card's chart, inside its frame
    expect(html).toContain('15000'); // the orders card's count
    expect(html).not.toMatch(/<script|\sstyle=/i);
  });

  it('shares a dashboard of cards as any other: the policy decides, the runtime serves it to whom it is shared with', async () => {
    const { body } = await build(people.owner, own, 'Shared board');
    expect((await open(`/d/${body.id}`, people.listed)).status).toBe(403);
    await h.call('PATCH', `/dashboards/${body.id}/share`, people.owner, {
      visibility: 'users',
      allowed_users: ['luke'],
      allowed_groups: [],
    });
    expect((await open(`/d/${body.id}`, people.listed)).status).toBe(200);
    expect((await open(`/d/${body.id}`, people.other)).status).toBe(403);
  });

  it.each([
    ["someone else's dashboard that I may open", () => [own[0]!, others], 403, /belongs to oscar/],
    ["someone else's dashboard that I may not open", () => [own[0]!, privateOfOthers], 404, /does not exist/],
    ['a dashboard that does not exist', () => [own[0]!, 'no-such-dashboard'], 404, /does not exist/],
  ])('refuses a card that is %s (%#)', async (_, ids, status, detail) => {
    const before = (await h.db.query('SELECT id FROM explore_dashboards')).length;
    const res = await build(people.owner, ids());
    expect(res.status).toBe(status);
    expect(res.body.detail).toMatch(detail);
    expect((await h.db.query('SELECT id FROM explore_dashboards')).length).toBe(before);
  });

  it('refuses an administrator the dashboards of others, though the administrator may open them', async () => {
    expect((await build(people.admin, own)).status).toBe(403);
  });

  it('takes 2 to 12 different dashboards and a title, and no dashboard of cards as a card', async () => {
    const one = await build(people.owner, [own[0]!]);
    expect(one.status).toBe(400);
    expect(one.body.errors[0].message).toMatch(/2 to 12 cards/);
    expect(
      (
        await build(
          people.owner,
          Array.from({ length: 13 }, () => own[0]!),
        )
      ).status,
    ).toBe(400);
    const twice = await build(people.owner, [own[0]!, own[0]!]);
    expect(twice.status).toBe(400);
    expect(twice.body.errors[0].message).toMatch(/different dashboard/);
    expect((await build(people.owner, own, '  ')).status).toBe(400);
    const board = await build(people.owner, own);
    const nested = await build(people.owner, [own[0]!, board.body.id]);
    expect(nested.status).toBe(422);
    const chart = await h.call('PUT', `/dashboards/${board.body.id}/chart`, people.owner, { type: 'table' });
    expect(chart.status).toBe(422);
  });

  it('refuses a card changed inside the page even when the page is signed again with the right key', async () => {
    const { body } = await build(people.owner, own);
    const page = await pageOf(body.id);
    const tampered = bodyOf(page).replace('15000', '15001');
    expect(tampered).not.toBe(bodyOf(page));
    await replacePage(body.id, signDashboard(tampered, 'test-key', { id: body.id, owner: people.owner.user }));
    const res = await open(`/d/${body.id}`, people.owner);
    expect(res.status).toBe(403);
    expect((await res.json()).detail).toMatch(new RegExp(`card '${own[1]}': the signature does not verify`));
  });

  it('refuses a page of cards signed again with a wrong key', async () => {
    const { body } = await build(people.owner, own);
    const tampered = bodyOf(await pageOf(body.id)).replace('15000', '15001');
    await replacePage(body.id, signDashboard(tampered, 'wrong-key', { id: body.id, owner: people.owner.user }));
    const res = await open(`/d/${body.id}`, people.owner);
    expect(res.status).toBe(403);
    expect((await res.json()).detail).toMatch(/signature does not verify/);
  });

  it("refuses a page of cards holding someone else's card, each signature valid", async () => {
    const theirs = await h.call('POST', '/dashboards', people.other, {
      title: 'theirs',
      cards: [{ dashboard_id: others }, { dashboard_id: privateOfOthers }],
    });
    expect(theirs.status).toBe(201);
    const { body } = await build(people.owner, own);
    // oscar's two cards, with their valid signatures, moved into olivia's page, which is signed again correctly
    const frames = (text: string) => text.match(/<iframe class="card"[^>]*><\/iframe>/g)!;
    const stolen = frames(await pageOf(theirs.body.id));
    let mixed = bodyOf(await pageOf(body.id));
    for (const [i, frame] of frames(mixed).entries()) mixed = mixed.replace(frame, stolen[i]!);
    await replacePage(body.id, signDashboard(mixed, 'test-key', { id: body.id, owner: people.owner.user }));
    const res = await open(`/d/${body.id}`, people.owner);
    expect(res.status).toBe(403);
    expect((await res.json()).detail).toMatch(/belongs to oscar, not to the dashboard's owner/);
  });

  it("lists on the runtime's home page exactly the dashboards the policy lets the viewer open", async () => {
    const { body } = await build(people.owner, own, 'Home board <b>');
    await h.call('PATCH', `/dashboards/${body.id}/share`, people.owner, {
      visibility: 'users',
      allowed_users: ['luke'],
      allowed_groups: [],
    });
    const home = async (who: ExploreIdentity) => {
      const res = await open('/', who);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'; script-src 'self'; style-src 'self'/);
      const html = await res.text();
      return { html, ids: [...html.matchAll(/<a href="d\/([^"]+)">/g)].map((m) => m[1]) };
    };
    const forOwner = await home(people.owner);
    expect(forOwner.ids).toEqual(expect.arrayContaining([...own, body.id, others]));
    expect(forOwner.ids).not.toContain(privateOfOthers);
    expect(forOwner.html).toContain('Home board &lt;b&gt;');
    expect(forOwner.html).toContain('<td>2 cards</td>');
    const forLuke = await home(people.listed);
    expect(forLuke.ids).toContain(body.id);
    expect(forLuke.ids).toContain(others);
    expect(forLuke.ids).not.toContain(own[0]);
    const forVera = await home(people.viewer);
    expect(forVera.ids).toEqual([]);
    expect(forVera.html).toContain('No dashboard is shared with you yet');
    const css = await open('/ui/base.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('answers the home page without identity 401, and 503 when explore cannot be reached', async () => {
    const anonymous = await open('/');
    expect(anonymous.status).toBe(401);
    const pool = createSandboxPool(createProcessLauncher(), { idleSeconds: 60, max: 1, maxPerUser: 1 });
    const cut = createRuntimeApp({
      pool,
      pages: h.deps.pages,
      sessions: createSessions('test-key'),
      keys: { current: 'test-key' },
      exploreUrl: 'http://127.0.0.1:9',
      fetch,
      logger: createLogger('runtime', 'silent'),
      metrics: createMetrics('dashboards-runtime'),
      ready: async () => true,
    });
    const res = await cut.request('/', { headers: headers(people.owner) });
    expect(res.status).toBe(503);
    expect((await res.json()).detail).toMatch(/could not be fetched/);
    await pool.close();
  });
});
