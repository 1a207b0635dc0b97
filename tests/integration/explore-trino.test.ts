import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTrinoEngine } from '../../src/explore/engines/trino.ts';
import type { QueryEngine } from '../../src/explore/engines/types.ts';
import { exploreHttpContract } from '../support/explore-http-contract.ts';
import { exploreHostileContract } from '../support/explore-hostile-contract.ts';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';
import { ensureTrino, serviceTrinoEngine, trinoToken } from '../support/trino.ts';

// The explore service on the real Trino that scripts/start-trino.sh runs (HTTPS, JWT, file-based access control,
// scripts/trino/rules.json): every statement runs with the caller's own token, so Trino's row filter (ana on
// orders), column mask (c_phone for ana, abe, eve) and denied table (supplier) apply behind the service's policy.
let engine: QueryEngine;
const tokens: Record<string, string> = {};

async function openTrino(): Promise<void> {
  const { ca } = ensureTrino();
  for (const who of Object.values(as)) tokens[who.user] = await trinoToken(who.user);
  engine = await serviceTrinoEngine(ca);
}

const onTrino = (env: Record<string, string> = {}, extra: { tokens?: Record<string, string> } = {}) =>
  exploreHarness(env, { engine, tokens: { ...tokens, ...extra.tokens } });

describe('explore on Trino', () => {
  beforeAll(openTrino, 300_000);

  describe('the same HTTP behaviour as on the embedded engine', () => {
    exploreHttpContract((env) => onTrino(env));
  });

  describe('the same refusals of a hostile caller as on the embedded engine', () => {
    exploreHostileContract((env) => onTrino(env));
  });

  describe("Trino's own rules, applied per caller", () => {
    let gw: ScriptedGateway;
    let h: ExploreHarness;
    let answer = '';
    beforeAll(async () => {
      gw = await startScriptedGateway({ models: ['svc-chat'], chat: () => answer });
      h = await onTrino({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat' });
    }, 120_000);
    afterAll(async () => {
      await h.close();
      await gw.close();
    });
    const ask = (who: (typeof as)[keyof typeof as], sql: string, body: Record<string, unknown> = {}) => {
      answer = `\`\`\`sql\n${sql}\n\`\`\``;
      return h.ask(who, { question: 'a question', force: true, ...body });
    };

    it('gives two users of one role different rows for the same question (row filter), never from one cache entry', async () => {
      answer = '```sql\nSELECT count(*) AS orders FROM tpch.tiny.orders\n```';
      const ana = await h.ask(as.analyst, { question: 'how many orders are on record' });
      const abe = await h.ask(as.analyst2, { question: 'how many orders are on record' });
      expect(ana.status).toBe(200);
      expect(abe.body).toMatchObject({ cached: false, preview_rows: [[15000]] });
      expect(ana.body.preview_rows[0][0]).toBeGreaterThan(0);
      expect(ana.body.preview_rows[0][0]).toBeLessThan(15000);
      // each user's answer is cached for that user only
      expect((await h.ask(as.analyst, { question: 'how many orders are on record' })).body).toMatchObject({
        cached: true,
        preview_rows: ana.body.preview_rows,
      });
      expect((await h.ask(as.analyst2, { question: 'how many orders are on record' })).body).toMatchObject({
        cached: true,
        preview_rows: [[15000]],
      });
    });

    it("returns the column Trino masks already masked, to a role that the service's own redaction lets through", async () => {
      const res = await ask(as.engineer, 'SELECT c_custkey, c_phone FROM tpch.tiny.customer ORDER BY c_custkey LIMIT 3');
      expect(res.status).toBe(200);
      expect(res.body.masked_columns).toEqual([]);
      for (const [, phone] of res.body.preview_rows) expect(phone).toMatch(/^XX-XXX-XXX-\d{4}$/);
      const admin = await ask(as.admin, 'SELECT c_custkey, c_phone FROM tpch.tiny.customer ORDER BY c_custkey LIMIT 1');
      expect(admin.body.preview_rows[0][1]).toMatch(/^\d{2}-\d{3}-\d{3}-\d{4}$/);
    });

    it('is refused by Trino on a table the policy engine allowed', async () => {
      const res = await ask(as.engineer, 'SELECT count(*) FROM tpch.tiny.supplier');
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(/Access Denied/);
    });

    it('answers 401 for a wrong or expired token, and for none', async () => {
      const wrong = await onTrino({ SVC_LLM_URL: gw.url }, { tokens: { abe: `${tokens.abe!.slice(0, -4)}AAAA` } });
      answer = '```sql\nSELECT count(*) FROM tpch.tiny.nation\n```';
      const res = await wrong.ask(as.analyst2, { question: 'how many nations', force: true });
      expect(res.status).toBe(401);
      expect(res.body.detail).toMatch(/token/);
      const expired = await onTrino({ SVC_LLM_URL: gw.url }, { tokens: { abe: await trinoToken('abe', '-1m') } });
      expect((await expired.ask(as.analyst2, { question: 'how many nations', force: true })).status).toBe(401);
      const none = await h.app.request('/query', {
        method: 'POST',
        headers: { 'X-User-Id': 'abe', 'X-User-Role': 'svc-analyst', 'Content-Type': 'application/json' },
        body: JSON.stringify({ question: 'how many nations', force: true }),
      });
      expect(none.status).toBe(401);
      await wrong.close();
      await expired.close();
    });

    it("answers 422 with Trino's message for a statement Trino cannot analyse", async () => {
      const res = await ask(as.analyst, 'SELECT no_such_column FROM tpch.tiny.nation');
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(/no_such_column/);
      expect(res.body.detail).not.toMatch(/\tat |\.java:/);
    });

    it('stops a scan of tpch.sf100.lineitem at the cost gate, then runs it under a LIMIT when confirmed', async () => {
      const sql = 'SELECT l_orderkey, l_quantity FROM tpch.sf100.lineitem';
      const over = await ask(as.engineer, sql);
      expect(over.status).toBe(413);
      expect(over.body).toMatchObject({ cost_bytes: null });
      expect(over.body.detail).toMatch(/unknown number of bytes.*confirm_cost=true/);
      const confirmed = await ask(as.engineer, sql, { confirm_cost: true });
      expect(confirmed.status).toBe(200);
      expect(confirmed.body.sql).toMatch(/LIMIT 10000$/);
      expect(confirmed.body.row_count).toBe(10000);
    }, 120_000);

    it('redacts personal columns at every scale Trino holds, not only the described sample', async () => {
      // engineers may read tpch.sf1; here they do not bypass redaction
      const strict = await onTrino({ SVC_LLM_URL: gw.url, SVC_PII_BYPASS_ROLES: 'svc-admin' });
      answer = '```sql\nSELECT c_name, c_acctbal FROM tpch.sf1.customer ORDER BY c_custkey LIMIT 2\n```';
      const res = await strict.ask(as.engineer, { question: 'richest customers', force: true });
      expect(res.status).toBe(200);
      expect(res.body.masked_columns).toEqual(['c_name']);
      expect(res.body.preview_rows.map((r: unknown[]) => r[0])).toEqual(['***', '***']);
      await strict.close();
    });
  });

  describe('the engine port on Trino', () => {
    it('cancels a statement in Trino when it outlives its time limit', async () => {
      const tag = `cancel-${Date.now()}`;
      const started = Date.now();
      const err = await engine
        .execute(
          `SELECT count(*) FROM tpch.sf1000.lineitem /* ${tag} */`,
          { user: 'ada', token: tokens.ada },
          { timeoutMs: 1500, reads: ['tpch.sf1000.lineitem'] },
        )
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: 'timeout' });
      expect(Date.now() - started).toBeLessThan(10_000);
      // Trino itself stopped it: the query is canceled, not left running (ada may see every query; the IO plan
      // execution asked for first is a query of its own)
      const find = `SELECT state, error_code FROM system.runtime.queries WHERE query LIKE '%/* ${tag} */%' AND query NOT LIKE '%system.runtime%' AND query NOT LIKE 'EXPLAIN%'`;
      let rows: unknown[][] = [];
      for (let i = 0; i < 40; i++) {
        rows = (await engine.execute(find, { user: 'ada', token: tokens.ada! }, { timeoutMs: 10_000, reads: ['system.runtime.queries'] }))
          .rows;
        if (rows.length > 0 && rows[0]![0] !== 'RUNNING') break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(rows).toEqual([['FAILED', 'USER_CANCELED']]);
    }, 60_000);

    it('refuses a statement whose own IO plan reads a table validation did not approve, naming it, before it runs', async () => {
      const err = await engine
        .execute(
          'SELECT count(*) FROM tpch.tiny.customer',
          { user: 'ada', token: tokens.ada },
          { timeoutMs: 10_000, reads: ['tpch.tiny.nation'] },
        )
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: 'forbidden', message: expect.stringContaining('plan reads tpch.tiny.customer') });
      const ok = await engine.execute(
        'SELECT count(*) FROM tpch.tiny.customer',
        { user: 'ada', token: tokens.ada },
        { timeoutMs: 10_000, reads: ['tpch.tiny.customer'] },
      );
      expect(ok.rows).toEqual([[1500]]);
    });

    it('answers 503 when Trino cannot be reached', async () => {
      const gone = createTrinoEngine({
        url: 'https://127.0.0.1:9',
        serviceUser: 'svc-service',
        serviceToken: 'x',
        metadataTimeoutMs: 5000,
      });
      await expect(gone.execute('SELECT 1', { user: 'ada', token: tokens.ada }, { timeoutMs: 5000, reads: [] })).rejects.toMatchObject({
        kind: 'unavailable',
        message: expect.stringMatching(/cannot be reached/),
      });
    });

    it('reads the catalog from information_schema, skipping catalogs Trino does not have', async () => {
      const cols = await engine.columns(['tpch', 'tpcds', 'postgresql', 'iceberg']);
      expect(cols).toContainEqual({ catalog: 'tpch', schema: 'tiny', table: 'customer', column: 'c_phone', type: 'varchar(15)' });
      // tpcds and postgresql have no Trino 476 plugin; iceberg is the lake, read like any other catalog
      // (explore-lake-trino.test.ts)
      expect([...new Set(cols.map((c) => c.catalog))].filter((c) => c !== 'tpch' && c !== 'iceberg')).toEqual([]);
    });
  });
});
