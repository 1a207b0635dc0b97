import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';

// The analyst's workbench over HTTP on the embedded sample: edited SQL through the pipeline, the CSV of a result,
// the caller's history and saved questions, and the offline planner's refusals.
const PER_NATION_SQL =
  'SELECT n.n_name AS nation, count(*) AS customers FROM tpch.tiny.customer c JOIN tpch.tiny.nation n ON c.c_nationkey = n.n_nationkey GROUP BY n.n_name';
const CONTACTS_SQL = 'SELECT c_name, c_acctbal FROM tpch.tiny.customer ORDER BY c_custkey LIMIT 3';

let h: ExploreHarness;
beforeAll(async () => {
  h = await exploreHarness();
}, 60_000);
afterAll(() => h?.close());

const dashboards = async () => (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM explore_dashboards'))[0]!.n;

describe('POST /query with sql', () => {
  it('runs an edited statement through validation, execution, redaction and publication', async () => {
    const res = await h.ask(as.analyst, { sql: PER_NATION_SQL });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ row_count: 25, cached: false, masked_columns: [], model: '' });
    expect(res.body.sql).toMatch(/LIMIT 10000$/);
    expect(res.body.reasoning).toEqual({
      intent: 'edited SQL',
      candidate_tables: ['tpch.tiny.customer', 'tpch.tiny.nation'],
      allowed_tables: ['tpch.tiny.customer', 'tpch.tiny.nation'],
      tables_used: ['tpch.tiny.customer', 'tpch.tiny.nation'],
    });
    expect(res.body.dashboard_id).toEqual(expect.any(String));
    const mine = await h.call('GET', '/dashboards?scope=mine', as.analyst);
    expect(mine.body.dashboards.find((d: { id: string }) => d.id === res.body.dashboard_id).title).toMatch(/^SQL: SELECT n\.n_name/);
  });

  it('masks personal columns of an edited statement as of a generated one', async () => {
    const res = await h.ask(as.analyst, { sql: CONTACTS_SQL, persist: false });
    expect(res.status).toBe(200);
    expect(res.body.masked_columns).toEqual(['c_name']);
    expect(res.body.preview_rows.map((r: unknown[]) => r[0])).toEqual(['***', '***', '***']);
  });

  it('runs it every time: an edited statement is never answered from the cache', async () => {
    const first = await h.ask(as.analyst, { sql: 'SELECT count(*) AS n FROM tpch.tiny.region', persist: false });
    const again = await h.ask(as.analyst, { sql: 'SELECT count(*) AS n FROM tpch.tiny.region', persist: false });
    expect([first.body.cached, again.body.cached]).toEqual([false, false]);
  });

  it('is a turn of the session, so a follow-up question builds on it', async () => {
    const res = await h.ask(as.analyst, { sql: 'SELECT count(*) AS n FROM tpch.tiny.part', session_id: 'edits', persist: false });
    expect(res.body.session_history_size).toBe(1);
    const turns = (await h.call('GET', '/session/edits', as.analyst)).body.history;
    expect(turns).toEqual([expect.objectContaining({ question: 'Run this SQL, as I edited it.', summary: 'edited SQL' })]);
    expect(turns[0].sql).toContain('tpch.tiny.part');
  });

  it('returns the statement without running it on a dry run', async () => {
    const res = await h.ask(as.analyst, { sql: 'select count(*) from tpch.tiny.orders', execute: false });
    expect(res.body).toMatchObject({ row_count: 0, preview_rows: [], dashboard_id: null });
    expect(res.body.cost_bytes).toEqual(expect.any(Number));
  });

  it.each([
    [{}, 'json.question'],
    [{ question: 'how many orders', sql: 'SELECT 1' }, 'json.sql'],
  ])('refuses %j with 400 saying to send exactly one of question and sql', async (body, location) => {
    const res = await h.ask(as.analyst, body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ location, message: expect.stringContaining('exactly one of question') }]);
  });

  it.each([
    ['SELECT s_name FROM tpch.tiny.supplier', 403, 'The SQL reads tpch.tiny.supplier, which is not open to you'],
    ['SELECT c.c_name FROM customer c JOIN supplier s ON c.c_nationkey = s.s_nationkey', 403, 'tpch.tiny.supplier'],
    ['SELECT * FROM tpch.information_schema.columns', 403, 'a catalog or system relation'],
    ['DELETE FROM tpch.tiny.orders', 422, 'The SQL was rejected'],
    ['SELECT FROM WHERE', 422, 'does not parse'],
  ])('refuses %j with %i naming why', async (sql, status, detail) => {
    const res = await h.ask(as.analyst, { sql });
    expect(res.status).toBe(status);
    expect(res.body.detail).toContain(detail);
  });

  it('holds an edited statement to the cost gate like a generated one', async () => {
    const strict = await exploreHarness({ SVC_COST_BYTES_LIMIT: '10000' });
    try {
      const over = await strict.ask(as.analyst, { sql: PER_NATION_SQL });
      expect(over.status).toBe(413);
      expect(over.body.detail).toMatch(/confirm_cost=true/);
      expect((await strict.ask(as.analyst, { sql: PER_NATION_SQL, confirm_cost: true })).status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('refuses a caller without identity', async () => {
    expect((await h.call('POST', '/query', undefined, { sql: 'SELECT 1' })).status).toBe(401);
  });
});

describe('POST /query/csv', () => {
  it('downloads every row as CSV, personal columns masked as on screen, and publishes nothing', async () => {
    const before = await dashboards();
    const res = await h.call('POST', '/query/csv', as.analyst, {
      sql: 'SELECT c_custkey, c_name, c_phone FROM tpch.tiny.customer ORDER BY c_custkey',
    });
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="explore-result.csv"');
    const lines = (res.body as string).split('\r\n');
    expect(lines[0]).toBe('c_custkey,c_name,c_phone');
    expect(lines[1]).toBe('1,***,***');
    expect(lines).toHaveLength(1500 + 2); // every row (not the 100 of a preview), and the last line's end
    expect(res.body).not.toMatch(/Customer#/);
    expect(await dashboards()).toBe(before);
  });

  it('shows a bypass role the values, and answers a question as well as a statement', async () => {
    const admin = await h.call('POST', '/query/csv', as.admin, { sql: CONTACTS_SQL });
    expect((admin.body as string).split('\r\n')[1]).toMatch(/^Customer#000000001,/);
    const asked = await h.call('POST', '/query/csv', as.analyst, { question: 'how many customers per nation' });
    expect(asked.status).toBe(200);
    expect((asked.body as string).split('\r\n')[0]).toBe('nation,customer');
  });

  it('quotes what needs quoting and defuses a formula', async () => {
    const res = await h.call('POST', '/query/csv', as.analyst, { sql: `SELECT '=1+2' AS f, '-5' AS n, 'a,"b"' AS q, NULL AS z` });
    expect(res.body).toBe(`f,n,q,z\r\n'=1+2,-5,"a,""b""",\r\n`);
  });

  it.each([
    [{ sql: 'SELECT s_name FROM tpch.tiny.supplier' }, 403],
    [{ sql: 'DROP TABLE tpch.tiny.orders' }, 422],
    [{ question: 'x', sql: 'SELECT 1' }, 400],
  ])('refuses %j with %i as /query does', async (body, status) => {
    const res = await h.call('POST', '/query/csv', as.analyst, body);
    expect(res.status).toBe(status);
    expect(res.type).toContain('application/problem+json');
  });
});

describe('GET /history', () => {
  it("lists the caller's own questions and runs newest first, with their SQL, and pages by before", async () => {
    const asker = { user: 'hal', role: 'svc-analyst' };
    const first = await h.ask(asker, { question: 'how many regions are there', force: true });
    await h.ask(asker, { sql: 'SELECT s_name FROM tpch.tiny.supplier' });
    await h.ask(asker, { sql: 'SELECT count(*) AS n FROM tpch.tiny.nation' });
    const res = await h.call('GET', '/history', asker);
    expect(res.status).toBe(200);
    expect(res.body.next_before).toBeNull();
    expect(res.body.history).toMatchObject([
      { source: 'sql', question: null, outcome: 'answered', status: 200, row_count: 1, sql: expect.stringContaining('tpch.tiny.nation') },
      { source: 'sql', outcome: 'refused', status: 403, row_count: null, dashboard_id: null, sql: 'SELECT s_name FROM tpch.tiny.supplier' },
      {
        source: 'question',
        question: 'how many regions are there',
        outcome: 'answered',
        row_count: 1,
        dashboard_id: first.body.dashboard_id,
      },
    ]);
    expect(res.body.history[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    const page1 = await h.call('GET', '/history?limit=2', asker);
    expect(page1.body.history).toHaveLength(2);
    const page2 = await h.call('GET', `/history?limit=2&before=${page1.body.next_before}`, asker);
    expect(page2.body.history.map((i: { question: string }) => i.question)).toEqual(['how many regions are there']);
    expect(page2.body.next_before).toBeNull();

    expect((await h.call('GET', '/history', { user: 'someone-else', role: 'svc-analyst' })).body.history).toEqual([]);
  });

  it('leaves CSV downloads out, and refuses a bad page size or no identity', async () => {
    const asker = { user: 'cass', role: 'svc-analyst' };
    await h.call('POST', '/query/csv', asker, { sql: 'SELECT 1 AS one' });
    expect((await h.call('GET', '/history', asker)).body.history).toEqual([]);
    expect((await h.call('GET', '/history?limit=0', asker)).status).toBe(400);
    expect((await h.call('GET', '/history')).status).toBe(401);
  });
});

describe('saved questions', () => {
  it('saves, lists and deletes the caller’s own; another user’s id is 404', async () => {
    const body = {
      title: 'Customers per nation',
      question: 'how many customers per nation',
      sql: PER_NATION_SQL,
      chart: { type: 'bar', x: 'nation', y: 'customers' },
    };
    const saved = await h.call('POST', '/saved', as.analyst, body);
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({ ...body, id: expect.any(String), owner: 'ana', created_at: expect.any(String) });
    const plain = await h.call('POST', '/saved', as.analyst, { title: 'Regions', sql: 'SELECT * FROM tpch.tiny.region' });
    expect(plain.body).toMatchObject({ question: null, chart: null });

    const mine = await h.call('GET', '/saved', as.analyst);
    expect(mine.body.saved.map((s: { title: string }) => s.title)).toEqual(['Regions', 'Customers per nation']);
    expect((await h.call('GET', '/saved', as.analyst2)).body.saved).toEqual([]);

    expect((await h.call('DELETE', `/saved/${saved.body.id}`, as.analyst2)).status).toBe(404);
    expect((await h.call('DELETE', `/saved/${saved.body.id}`, as.analyst)).body).toEqual({ deleted: saved.body.id });
    expect((await h.call('DELETE', `/saved/${saved.body.id}`, as.analyst)).status).toBe(404);
    expect((await h.call('GET', '/saved', as.analyst)).body.saved.map((s: { title: string }) => s.title)).toEqual(['Regions']);
  });

  it.each([
    [{ title: ' ', sql: 'SELECT 1' }, 'json.title'],
    [{ title: 't' }, 'json.sql'],
    [{ title: 't', sql: 'SELECT 1', chart: { type: 'pie' } }, 'json.chart.type'],
  ])('refuses %j with 400 naming the field', async (body, location) => {
    const res = await h.call('POST', '/saved', as.analyst, body);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { location: string }) => e.location)).toEqual([location]);
  });

  it('needs an identity', async () => {
    expect((await h.call('GET', '/saved')).status).toBe(401);
    expect((await h.call('POST', '/saved', undefined, { title: 't', sql: 'SELECT 1' })).status).toBe(401);
    expect((await h.call('DELETE', '/saved/x')).status).toBe(401);
  });
});

describe('the offline planner over HTTP', () => {
  it('answers "how many orders per year" grouped by year, never as one count', async () => {
    const res = await h.ask(as.analyst, { question: 'how many orders per year', force: true, persist: false });
    expect(res.status).toBe(200);
    expect(res.body.sql).toContain('GROUP BY extract(year FROM s.o_orderdate)');
    expect(res.body.row_count).toBe(7);
    expect(res.body.preview_rows.reduce((s: number, r: [number, number]) => s + r[1], 0)).toBe(15000);
  });

  it.each([
    ['how many orders per colour', "no column of orders matches 'colour'"],
    ['how many orders in 1995', "cannot apply '1995'"],
  ])('refuses %j with 422 saying what it cannot apply', async (question, why) => {
    const res = await h.ask(as.analyst, { question, force: true });
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain('cannot answer this question exactly');
    expect(res.body.detail).toContain(why);
  });

  it.each([
    ['how many suppliers are there', 'None of the tables this question needs is open to you: tpch.tiny.supplier'],
    ['how many suppliers per nation', 'This question needs tpch.tiny.supplier, which is not open to you'],
  ])('refuses %j with 403 naming the table the policy closes, not "needs a language model"', async (question, detail) => {
    const res = await h.ask(as.analyst, { question, force: true });
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain(detail);
    expect(res.body.detail).not.toContain('language model');
  });

  it('still answers an engineer, whom the policy opens the table', async () => {
    const res = await h.ask(as.engineer, { question: 'how many suppliers are there', force: true, persist: false });
    expect(res.status).toBe(200);
    expect(res.body.preview_rows).toEqual([[100]]);
  });
});

describe('the console', () => {
  it('serves the SQL editor as one ES module bundled from the installed CodeMirror packages', async () => {
    const res = await h.app.request('/ui/vendor/codemirror.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const bundle = await res.text();
    // one module with no bare import left for the browser to resolve
    expect(bundle).not.toMatch(/\bfrom\s*["']@/);
    for (const name of ['EditorView', 'sql', 'autocompletion', 'classHighlighter']) expect(bundle).toMatch(new RegExp(`as ${name}\\b`));
    for (const file of ['editor.js', 'editor.css', 'library.js', 'download.js'])
      expect((await h.app.request(`/ui/${file}`)).status, file).toBe(200);
  });
});
