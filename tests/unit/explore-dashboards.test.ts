import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupDeletedDashboards } from '../../src/explore/dashboards/maintenance.ts';
import { SHARING_PEOPLE, VISIBILITIES, CAN_VIEW, viewMatrix } from '../support/dashboards.ts';
import { exploreHarness, type ExploreHarness, type ExploreIdentity } from '../support/explore.ts';

// Dashboard sharing through HTTP: the full visibility matrix on /access and on the list scopes, and who may
// change or delete a dashboard. Every answer comes from the dashboards policy.
const people = SHARING_PEOPLE;

describe('dashboard sharing', () => {
  let h: ExploreHarness;
  const ids: Record<string, string> = {};

  const publishAs = async (who: ExploreIdentity, question: string) => {
    const res = await h.ask(who, { question, force: true });
    expect(res.status).toBe(200);
    return res.body.dashboard_id as string;
  };

  beforeAll(async () => {
    h = await exploreHarness();
    for (const v of VISIBILITIES) {
      ids[v] = await publishAs(people.owner, 'how many orders are there');
      const res = await h.call('PATCH', `/dashboards/${ids[v]}/share`, people.owner, {
        visibility: v,
        allowed_users: ['luke'],
        allowed_groups: ['finance'],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ visibility: v, allowed_users: ['luke'], allowed_groups: ['finance'] });
    }
  }, 60_000);
  afterAll(() => h.close());

  it.each(viewMatrix())('/access: %s on a %s dashboard -> %s', async (who, v, allow) => {
    const res = await h.call('GET', `/dashboards/${ids[v]}/access`, people[who]);
    expect(res.status).toBe(200);
    expect(res.body.allow).toBe(allow);
    expect(res.body.reason).toMatch(allow ? /^allowed: / : /^denied: /);
  });

  it.each(Object.keys(people) as (keyof typeof people)[])('lists for %s exactly what it may open, by scope', async (who) => {
    const visible = VISIBILITIES.filter((_, i) => CAN_VIEW[who][i]);
    const list = async (scope: string) =>
      ((await h.call('GET', `/dashboards?scope=${scope}`, people[who])).body.dashboards as { id: string }[])
        .map((d) => d.id)
        .filter((id) => Object.values(ids).includes(id));
    const idsOf = (vs: readonly string[]) => vs.map((v) => ids[v]!).sort();
    expect((await list('all')).sort()).toEqual(idsOf(visible));
    expect((await list('mine')).sort()).toEqual(who === 'owner' ? idsOf(VISIBILITIES) : []);
    expect((await list('public')).sort()).toEqual(idsOf(visible.filter((v) => v === 'public')));
    expect((await list('shared')).sort()).toEqual(who === 'owner' ? [] : idsOf(visible.filter((v) => v === 'users' || v === 'groups')));
  });

  it('refuses an unknown scope', async () => {
    expect((await h.call('GET', '/dashboards?scope=everything', people.owner)).status).toBe(400);
  });

  it('answers 404 to a stranger who tries to share or delete, and changes nothing', async () => {
    for (const who of [people.other, people.member, people.admin, people.viewer]) {
      const share = await h.call('PATCH', `/dashboards/${ids.private}/share`, who, {
        visibility: 'public',
        allowed_users: [],
        allowed_groups: [],
      });
      expect(share.status).toBe(404);
    }
    for (const who of [people.other, people.member, people.viewer]) {
      expect((await h.call('DELETE', `/dashboards/${ids.users}`, who)).status).toBe(404);
    }
    expect((await h.call('GET', `/dashboards/${ids.private}/access`, people.owner)).body.allow).toBe(true);
    const [row] = await h.db.query<{ visibility: string; deleted: boolean }>(
      'SELECT visibility, deleted_at IS NOT NULL AS deleted FROM explore_dashboards WHERE id = $1',
      [ids.private],
    );
    expect(row).toEqual({ visibility: 'private', deleted: false });
  });

  it('lets a listed user delete, and the dashboard is gone for everyone', async () => {
    const id = await publishAs(people.owner, 'how many parts are there');
    // its page is stored (the launch answer waits for it), so the row names it below
    expect((await h.call('GET', `/dashboards/${id}/launch`, people.owner)).status).toBe(200);
    await h.call('PATCH', `/dashboards/${id}/share`, people.owner, { visibility: 'users', allowed_users: ['luke'], allowed_groups: [] });
    expect((await h.call('DELETE', `/dashboards/${id}`, people.listed)).status).toBe(200);
    expect((await h.call('GET', `/dashboards/${id}/access`, people.owner)).status).toBe(404);
    expect((await h.call('DELETE', `/dashboards/${id}`, people.owner)).status).toBe(404);
    // the periodic cleanup then removes the page and the row
    const [row] = await h.db.query<{ object_key: string }>('SELECT object_key FROM explore_dashboards WHERE id = $1', [id]);
    expect(await h.deps.pages.get(row!.object_key)).not.toBeNull();
    expect(await cleanupDeletedDashboards(h.db, h.deps.pages)).toBe(1);
    expect(await h.deps.pages.get(row!.object_key)).toBeNull();
    expect(await h.db.query('SELECT 1 FROM explore_dashboards WHERE id = $1', [id])).toEqual([]);
  });

  it('validates the share body', async () => {
    const res = await h.call('PATCH', `/dashboards/${ids.public}/share`, people.owner, { visibility: 'everyone', allowed_users: 'luke' });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { location: string }) => e.location).sort()).toEqual(['json.allowed_users', 'json.visibility']);
  });
});
