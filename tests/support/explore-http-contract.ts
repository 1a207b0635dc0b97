import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAGE_BYTES, pageDigest } from '../../src/platform/dashboard-pages.ts';
import { verifyDashboard } from '../../src/platform/dashboard-signature.ts';
import { readObject } from '../../src/platform/objects/index.ts';
import { as, type ExploreHarness, type ExploreIdentity } from './explore.ts';
import { startScriptedGateway, type ScriptedGateway } from './scripted-gateway.ts';

// The explore service over HTTP, whatever engine runs the statements: the unit suite runs it on the embedded
// sample, the integration suite on a real Trino (whose tpch.tiny holds the same rows). `make` builds a harness on
// that engine with the given settings.
export const PER_NATION = 'how many customers are there per nation';
const TINY_TABLES = ['customer', 'lineitem', 'nation', 'orders', 'part', 'partsupp', 'region', 'supplier'].map((t) => `tpch.tiny.${t}`);

export function exploreHttpContract(make: (env?: Record<string, string>) => Promise<ExploreHarness>): void {
  describe('explore over HTTP, offline planner', () => {
    let h: ExploreHarness;
    beforeAll(async () => {
      h = await make();
    }, 60_000);
    afterAll(() => h.close());

    it('refuses a request without identity with 401 problem+json', async () => {
      const res = await h.call('POST', '/query', undefined, { question: PER_NATION });
      expect(res.status).toBe(401);
      expect(res.type).toContain('application/problem+json');
    });

    it('answers "how many customers are there per nation" from the sample, with every response field', async () => {
      const res = await h.ask(as.analyst, { question: PER_NATION, force: true });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        row_count: 25,
        cached: false,
        masked_columns: [],
        session_history_size: 0,
        model: 'offline-planner',
        columns: [
          { name: 'nation', type: expect.stringMatching(/^varchar/) },
          { name: 'customer', type: 'bigint' },
        ],
      });
      expect(res.body.sql).toMatch(/LIMIT 10000$/);
      expect(res.body.preview_rows.reduce((s: number, r: [string, number]) => s + r[1], 0)).toBe(1500);
      expect(res.body.reasoning).toMatchObject({ tables_used: ['tpch.tiny.customer', 'tpch.tiny.nation'] });
      expect(res.body.reasoning.allowed_tables).toEqual(expect.arrayContaining(['tpch.tiny.customer', 'tpch.tiny.nation']));
      expect(typeof res.body.cost_bytes).toBe('number');
      expect(res.body.dashboard_url).toMatch(/\/d\/[0-9a-f-]{36}$/);
    });

    it('publishes a signed page holding the redacted rows, and tells the runtime where it is and its digest', async () => {
      const res = await h.ask(as.analyst, { question: 'top 3 customer by account balance', force: true });
      expect(res.status).toBe(200);
      expect(res.body.masked_columns).toEqual(expect.arrayContaining(['c_name', 'c_phone', 'c_address']));
      const id = res.body.dashboard_id as string;
      const launch = await h.call('GET', `/dashboards/${id}/launch`, as.analyst);
      expect(launch.body).toMatchObject({
        allow: true,
        owner: 'ana',
        object_key: `${id}.html`,
        digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect((await h.call('GET', `/dashboards/${id}/launch`, as.user)).body).toEqual({ allow: false, reason: expect.any(String) });
      const bytes = (await readObject(h.deps.pages, launch.body.object_key, MAX_PAGE_BYTES))!;
      expect(pageDigest(bytes)).toBe(launch.body.digest);
      const file = bytes.toString('utf8');
      expect(file.split('\n')[0]).toMatch(/^# SVC_SIG: [0-9a-f]{64}$/);
      expect(verifyDashboard(file, { current: 'test-key' }, { id, owner: 'ana' }).ok).toBe(true);
      expect(file).toContain('***');
      expect(file).not.toContain('Customer#');
    });

    it('answers the same question from the cache, and force bypasses it', async () => {
      await h.ask(as.analyst, { question: 'how many orders are there' });
      const again = await h.ask(as.analyst, { question: 'how many orders are there' });
      expect(again.body.cached).toBe(true);
      const forced = await h.ask(as.analyst, { question: 'how many orders are there', force: true });
      expect(forced.body.cached).toBe(false);
      const other = await h.ask(as.analyst2, { question: 'how many orders are there' });
      expect(other.body.cached).toBe(false);
    });

    it('returns the SQL without running it on a dry run', async () => {
      const res = await h.ask(as.analyst, { question: 'how many orders are there', execute: false });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ row_count: 0, preview_rows: [], dashboard_url: null });
      expect(res.body.sql).toBe('SELECT count(*) AS orders FROM tpch.tiny.orders\nLIMIT 10000');
    });

    it('refuses with 403 when no candidate table is open to the caller', async () => {
      const res = await h.ask(as.viewer, { question: PER_NATION });
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(/None of the tables/);
    });

    it('answers 422 when the planner cannot answer and no model is configured', async () => {
      const res = await h.ask(as.analyst, { question: 'why did customers in europe churn after the price change' });
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(/SVC_LLM_URL/);
    });

    it("keeps each caller's session history to themselves", async () => {
      await h.ask(as.analyst, { question: 'how many parts are there', session_id: 's1' });
      const second = await h.ask(as.analyst, { question: 'how many nations are there', session_id: 's1' });
      expect(second.body.session_history_size).toBe(2);
      const mine = await h.call('GET', '/session/s1', as.analyst);
      expect(mine.body.history.map((t: { question: string }) => t.question)).toEqual([
        'how many parts are there',
        'how many nations are there',
      ]);
      expect((await h.call('GET', '/session/s1', as.analyst2)).body.history).toEqual([]);
    });

    it('records feedback for a dashboard the caller may open only; to anyone else it does not exist', async () => {
      const q = await h.ask(as.analyst, { question: 'how many regions are there' });
      expect(
        (await h.call('POST', '/feedback', as.analyst, { dashboard_id: q.body.dashboard_id, rating: 'up', comment: 'right' })).status,
      ).toBe(201);
      expect((await h.call('POST', '/feedback', as.analyst, { dashboard_id: 'nope', rating: 'up' })).status).toBe(404);
      // private to ana: the same 404 for uma as for an id that never existed
      const stranger = await h.call('POST', '/feedback', as.user, { dashboard_id: q.body.dashboard_id, rating: 'down' });
      expect(stranger).toMatchObject({ status: 404, body: { detail: `Dashboard '${q.body.dashboard_id}' does not exist.` } });
      expect((await h.call('POST', '/feedback', as.analyst, { dashboard_id: q.body.dashboard_id, rating: 'meh' })).status).toBe(400);
    });

    it('searches the catalog, falling back to every table when nothing matches', async () => {
      const res = await h.call('GET', '/catalog?q=order%20total%20price', as.analyst);
      expect(res.body.entries[0]).toMatchObject({ fqn: 'tpch.tiny.orders', name: 'orders' });
      expect(res.body.entries[0].columns).toContainEqual({ name: 'o_totalprice', type: 'double', tags: [] });
      const none = await h.call('GET', '/catalog?q=weather', as.analyst);
      expect(none.body).toMatchObject({ fallback: true });
      const open = TINY_TABLES.filter((t) => t !== 'tpch.tiny.supplier');
      expect(none.body.entries.map((e: { fqn: string }) => e.fqn)).toEqual(expect.arrayContaining(open));
    });

    it('shows each caller only the tables the policy opens to it, with their tags', async () => {
      const fqns = async (who: ExploreIdentity) =>
        ((await h.call('GET', '/catalog', who)).body.entries as { fqn: string }[])
          .map((e) => e.fqn)
          .filter((f) => f.startsWith('tpch.tiny.'));
      expect((await fqns(as.analyst)).sort()).toEqual(TINY_TABLES.filter((t) => t !== 'tpch.tiny.supplier'));
      expect((await fqns(as.user)).sort()).toEqual(['lineitem', 'nation', 'orders', 'part', 'region'].map((t) => `tpch.tiny.${t}`));
      expect(await fqns(as.viewer)).toEqual([]);
      expect(await fqns({ user: 'mallory', role: 'made-up-role' })).toEqual([]);
    });

    it('lists the offline model', async () => {
      expect((await h.call('GET', '/models', as.analyst)).body).toMatchObject({ default: 'offline-planner', models: ['offline-planner'] });
    });

    it('exposes the query metrics', async () => {
      const text = await (await h.app.request('/metrics')).text();
      expect(text).toContain('explore_query_duration_seconds_bucket');
      expect(text).toMatch(/explore_query_total\{[^}]*outcome="cached"/);
    });
  });

  describe('explore cost gate', () => {
    let h: ExploreHarness;
    beforeAll(async () => {
      h = await make({ SVC_COST_BYTES_LIMIT: '10000' });
    }, 60_000);
    afterAll(() => h.close());

    it('answers 413 above the limit, then runs with confirm_cost=true', async () => {
      const over = await h.ask(as.analyst, { question: PER_NATION });
      expect(over.status).toBe(413);
      expect(over.body.detail).toMatch(/confirm_cost=true/);
      expect(over.body.cost_bytes).toBeGreaterThan(10000);
      const confirmed = await h.ask(as.analyst, { question: PER_NATION, confirm_cost: true });
      expect(confirmed.status).toBe(200);
      expect(confirmed.body.row_count).toBe(25);
    });

    it('is off with SVC_COST_GATE=false', async () => {
      const off = await make({ SVC_COST_BYTES_LIMIT: '10', SVC_COST_GATE: 'false' });
      expect((await off.ask(as.analyst, { question: PER_NATION })).status).toBe(200);
      await off.close();
    });
  });

  describe('explore with a language model', () => {
    let gw: ScriptedGateway;
    let h: ExploreHarness;
    let answer = '';
    beforeAll(async () => {
      gw = await startScriptedGateway({ models: ['svc-chat', 'other-model'], chat: () => answer });
      h = await make({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat' });
    }, 60_000);
    afterAll(async () => {
      await h.close();
      await gw.close();
    });
    const lastPrompt = () => gw.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body;

    it('sends the allowed tables to the model and runs its SQL', async () => {
      answer = 'Counting orders.\n```sql\nSELECT count(*) AS n FROM tpch.tiny.orders\n```';
      const res = await h.ask(as.user, { question: 'how many orders and customers are there', force: true });
      expect(res.status).toBe(200);
      expect(res.body.preview_rows).toEqual([[15000]]);
      expect(res.body.reasoning.intent).toBe('Counting orders.');
      const system = lastPrompt().messages[0].content as string;
      expect(system).toContain('tpch.tiny.orders(');
      // svc-user may not read customer: it never reaches the prompt
      expect(system).not.toContain('tpch.tiny.customer');
      expect(lastPrompt().model).toBe('svc-chat');
    });

    it('uses the requested model, and refuses one the gateway does not declare', async () => {
      answer = '```sql\nSELECT 1 AS one FROM tpch.tiny.region\n```';
      expect((await h.ask(as.analyst, { question: 'how many regions', model: 'other-model', force: true })).status).toBe(200);
      expect(lastPrompt().model).toBe('other-model');
      const res = await h.ask(as.analyst, { question: 'how many regions', model: 'gpt-nonexistent' });
      expect(res.status).toBe(400);
      expect(res.body.detail).toContain('Unknown LLM model');
      expect(res.body.errors).toEqual([{ location: 'json.model', message: 'Unknown LLM model' }]);
    });

    it('lists the gateway models', async () => {
      expect((await h.call('GET', '/models', as.analyst)).body).toMatchObject({ default: 'svc-chat', models: ['svc-chat', 'other-model'] });
    });

    it.each([
      ['DELETE FROM tpch.tiny.orders', 422],
      ['SELECT 1; DROP TABLE tpch.tiny.orders', 422],
      ["SELECT * FROM TABLE(postgresql.system.query(query => 'delete from t'))", 422],
      ['SELECT c_phone FROM tpch.tiny.customer', 403],
      ['SELECT s_name FROM tpch.tiny.supplier', 403],
    ])('refuses a generated %j with %i', async (sql, status) => {
      answer = `\`\`\`sql\n${sql}\n\`\`\``;
      const res = await h.ask(as.user, { question: 'how many orders', force: true });
      expect(res.status).toBe(status);
    });

    it('gives the model the last three turns of the session only', async () => {
      answer = '```sql\nSELECT count(*) FROM tpch.tiny.nation\n```';
      for (const q of ['q one', 'q two', 'q three', 'q four'])
        await h.ask(as.analyst, { question: `how many nations ${q}`, session_id: 'hist', force: true });
      await h.ask(as.analyst, { question: 'how many nations now', session_id: 'hist', force: true });
      const users = (lastPrompt().messages as { role: string; content: string }[]).filter((m) => m.role === 'user').map((m) => m.content);
      expect(users).toEqual(['how many nations q two', 'how many nations q three', 'how many nations q four', 'how many nations now']);
    });

    // What a hostile model (or whoever writes its answer) can send: each must be refused, or its personal values
    // masked, on every engine.
    const PERSONAL = /Customer#|Supplier#|\d{2}-\d{3}-\d{3}-\d{4}/;

    it.each([
      "SELECT query_to_xml('select c_name,c_phone,c_address from tiny.customer limit 3',true,false,'') AS x",
      "SELECT table_to_xml('tiny.customer', true, false, '') AS x",
      "SELECT database_to_xml(true, false, '') AS x",
      "SELECT ts_stat('select to_tsvector(c_name) from tiny.customer') AS x",
      "SELECT pg_ls_dir('.') AS x",
      "SELECT current_setting('data_directory') AS x",
      'SELECT to_json(c.*) AS v FROM tpch.tiny.customer c',
      'SELECT row_to_json(customer.*) AS v FROM tpch.tiny.customer',
    ])('refuses %j, naming the function', async (sql) => {
      answer = `\`\`\`sql\n${sql}\n\`\`\``;
      const res = await h.ask(as.user, { question: 'how many orders', force: true });
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(new RegExp(`The function ${/^SELECT (\w+)\(/.exec(sql)![1]} is not allowed`));
      expect(JSON.stringify(res.body)).not.toMatch(PERSONAL);
    });

    it('runs what it validated: a comment that nests for Postgres but not for Trino reads literals over orders', async () => {
      answer = "```sql\nSELECT 1 /* /* */ AS x, ' */ , c_name, c_phone FROM customer --' AS y, 2 AS z FROM tpch.tiny.orders LIMIT 3\n```";
      const res = await h.ask(as.user, { question: 'how many orders', force: true });
      expect(res.status).toBe(200);
      expect(res.body.reasoning.tables_used).toEqual(['tpch.tiny.orders']);
      expect(res.body.preview_rows).toEqual(Array(3).fill([1, ' */ , c_name, c_phone FROM customer --', 2]));
      expect(res.body.sql).not.toContain('/*');
    });

    it('masks whole rows passed to an allowed function, and a row named as a value', async () => {
      for (const sql of ['SELECT array_agg(c.*) AS v FROM tpch.tiny.customer c', 'SELECT c AS v FROM tpch.tiny.customer c LIMIT 3']) {
        answer = `\`\`\`sql\n${sql}\n\`\`\``;
        const res = await h.ask(as.analyst, { question: 'customer rows', force: true });
        // Trino refuses both forms itself; Postgres runs them: either way no personal value comes back
        if (res.status === 200) expect(res.body.masked_columns).toEqual(['v']);
        else expect(res.status).toBe(422);
        expect(JSON.stringify(res.body)).not.toMatch(PERSONAL);
      }
    });

    it('treats a quoted name as Trino does: a CTE named "Customer" hides the table for the engine as for the policy', async () => {
      answer = '```sql\nWITH "Customer" AS (SELECT 1 AS c_phone) SELECT c_phone FROM customer\n```';
      // it reads no table, so it reads 0 bytes: no confirmation needed
      const res = await h.ask(as.user, { question: 'how many orders', force: true });
      expect(res.status).toBe(200);
      expect(res.body.preview_rows).toEqual([[1]]);
      expect(res.body.cost_bytes).toBe(0);
    });

    it('passes a statement that reads no table at 0 bytes under any limit, and stops one that reads a table', async () => {
      const strict = await make({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat', SVC_COST_BYTES_LIMIT: '0' });
      for (const sql of ['SELECT 1 AS one', 'SELECT x FROM UNNEST(ARRAY[1, 2]) AS t(x)', 'VALUES (1, 2)']) {
        answer = `\`\`\`sql\n${sql}\n\`\`\``;
        const res = await strict.ask(as.user, { question: 'constants', force: true });
        expect(res.status, sql).toBe(200);
        expect(res.body.cost_bytes).toBe(0);
      }
      answer = '```sql\nSELECT r_name FROM tpch.tiny.region\n```';
      expect((await strict.ask(as.user, { question: 'regions', force: true })).status).toBe(413);
      await strict.close();
    });

    it("reports a cost proved from table statistics that is never below the engine's own estimate", async () => {
      for (const sql of [
        'SELECT n.n_name, count(*) AS customers FROM tpch.tiny.customer c JOIN tpch.tiny.nation n ON c.c_nationkey = n.n_nationkey GROUP BY n.n_name',
        'WITH big AS (SELECT o_custkey, o_totalprice FROM tpch.tiny.orders) SELECT count(*) FROM big a JOIN big b ON a.o_custkey = b.o_custkey',
        "SELECT count(*) FROM tpch.tiny.orders WHERE o_orderstatus = 'F'",
      ]) {
        answer = `\`\`\`sql\n${sql}\n\`\`\``;
        const res = await h.ask(as.admin, { question: 'cost', force: true });
        expect(res.status, sql).toBe(200);
        expect(res.body.cost_bytes, sql).toBeGreaterThanOrEqual((await h.deps.engine.estimateBytes(res.body.sql))!);
      }
    });

    it('refuses a result heavier than SVC_MAX_RESULT_BYTES with 413, and publishes nothing', async () => {
      const small = await make({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat', SVC_MAX_RESULT_BYTES: '100000' });
      answer = "```sql\nSELECT lpad('y', 50000, 'y') AS big FROM tpch.tiny.region\n```";
      const before = await small.db.query<{ n: number }>('SELECT count(*)::int AS n FROM explore_dashboards');
      const res = await small.ask(as.user, { question: 'big values', force: true });
      expect(res.status).toBe(413);
      expect(res.body.detail).toMatch(/SVC_MAX_RESULT_BYTES/);
      expect(await small.db.query('SELECT count(*)::int AS n FROM explore_dashboards')).toEqual(before);
      await small.close();
    });

    it('redacts personal data for an analyst and shows it to a bypass role', async () => {
      answer =
        '```sql\nSELECT c.c_name AS who, upper(c.c_phone) AS phone, c.c_acctbal FROM tpch.tiny.customer c ORDER BY c.c_custkey LIMIT 2\n```';
      const analyst = await h.ask(as.analyst, { question: 'customer contacts', force: true });
      expect(analyst.body.masked_columns).toEqual(['who', 'phone']);
      expect(analyst.body.preview_rows.map((r: unknown[]) => r.slice(0, 2))).toEqual([
        ['***', '***'],
        ['***', '***'],
      ]);
      const admin = await h.ask(as.admin, { question: 'customer contacts', force: true });
      expect(admin.body.masked_columns).toEqual([]);
      expect(admin.body.preview_rows[0][0]).toBe('Customer#000000001');
    });
  });
}
