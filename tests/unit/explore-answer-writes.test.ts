import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, exploreHarness, type ExploreHarness, type ExploreIdentity } from '../support/explore.ts';

// An answer's dashboard row is stored by the statement that records its question in the audit chain: both or
// neither, in one round trip. Through HTTP, with the database made to refuse one of the two (a trigger that raises).
// And what a request keeps from an earlier one (a statement's parse and lineage) never carries a decision over:
// the same statement text is still decided, and redacted, for each caller.
let h: ExploreHarness;
beforeAll(async () => {
  h = await exploreHarness();
}, 60_000);
afterAll(() => h.close());

const QUESTION = { question: 'how many regions are there' };
const dashboardsOf = async (owner: string) =>
  (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM explore_dashboards WHERE owner = $1', [owner]))[0]!.n;
const historyOf = async (who: ExploreIdentity) => (await h.call('GET', '/history', who)).body.history;

/** Runs `fn` while every insert into `table` fails. */
async function refusing(table: string, fn: () => Promise<void>) {
  await h.db.exec(`
    CREATE FUNCTION refuse_for_test() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused for the test'; END $$;
    CREATE TRIGGER refuse_for_test BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION refuse_for_test();`);
  try {
    await fn();
  } finally {
    await h.db.exec(`DROP TRIGGER refuse_for_test ON ${table}; DROP FUNCTION refuse_for_test();`);
  }
}

describe("an answer's writes", () => {
  it('store the dashboard and the record together, and the answer is cached only after', async () => {
    const who = { user: 'wes', role: 'svc-analyst' };
    const res = await h.ask(who, QUESTION);
    expect(res.status).toBe(200);
    expect(await dashboardsOf(who.user)).toBe(1);
    expect(await historyOf(who)).toMatchObject([{ outcome: 'answered', status: 200, dashboard_id: res.body.dashboard_id }]);
    expect((await h.ask(who, QUESTION)).body.cached).toBe(true);
  });

  it('give no answer, store no dashboard and record the failure when the dashboard row is refused', async () => {
    const who = { user: 'wil', role: 'svc-analyst' };
    await refusing('explore_dashboards', async () => {
      const res = await h.ask(who, QUESTION);
      expect(res.status).toBe(500);
    });
    expect(await dashboardsOf(who.user)).toBe(0);
    expect(await historyOf(who)).toMatchObject([{ question: QUESTION.question, outcome: 'failed', status: 500, dashboard_id: null }]);
    // nothing was cached: the question runs again, and is published
    const again = await h.ask(who, QUESTION);
    expect(again.body).toMatchObject({ cached: false, dashboard_id: expect.any(String) });
    expect(await dashboardsOf(who.user)).toBe(1);
  });

  it('give no answer and store no dashboard when the audit chain refuses the record', async () => {
    const who = { user: 'wyn', role: 'svc-analyst' };
    await refusing('audit_records', async () => {
      const res = await h.ask(who, QUESTION);
      expect(res.status).toBe(500);
    });
    expect(await dashboardsOf(who.user)).toBe(0);
    expect(await historyOf(who)).toEqual([]);
    expect((await h.ask(who, QUESTION)).body.cached).toBe(false);
  });
});

describe('a statement seen before', () => {
  const CONTACTS = 'SELECT c_name, c_nationkey FROM tpch.tiny.customer ORDER BY c_custkey LIMIT 3';

  it('is decided for each caller: the policy refuses the same text to a role it does not open', async () => {
    expect((await h.ask(as.analyst, { sql: CONTACTS, persist: false })).status).toBe(200);
    const refused = await h.ask(as.viewer, { sql: CONTACTS, persist: false });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('tpch.tiny.customer');
  });

  it("is redacted for each caller's role: masked for an analyst, shown to an engineer, masked again", async () => {
    const masked = await h.ask(as.analyst, { sql: CONTACTS, persist: false });
    const shown = await h.ask(as.engineer, { sql: CONTACTS, persist: false });
    const again = await h.ask(as.analyst, { sql: CONTACTS, persist: false });
    expect(masked.body.masked_columns).toEqual(['c_name']);
    expect(masked.body.preview_rows.map((r: unknown[]) => r[0])).toEqual(['***', '***', '***']);
    expect(shown.body.masked_columns).toEqual([]);
    expect(shown.body.preview_rows.map((r: unknown[]) => r[0])).toEqual(['Customer#000000001', 'Customer#000000002', 'Customer#000000003']);
    expect(again.body).toMatchObject({ masked_columns: ['c_name'], preview_rows: masked.body.preview_rows });
  });

  it('in another form is checked as its own: a statement that differs by a table is refused where it must be', async () => {
    expect((await h.ask(as.analyst, { sql: 'SELECT count(*) AS n FROM tpch.tiny.nation', persist: false })).status).toBe(200);
    const other = await h.ask(as.analyst, { sql: 'SELECT count(*) AS n FROM tpch.tiny.supplier', persist: false });
    expect(other.status).toBe(403);
  });
});
