import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';
import { ensureTrino, serviceTrinoEngine, trinoStatement, trinoToken } from '../support/trino.ts';

// Explore sees the lake: the integration Trino (scripts/start-trino.sh) has an `iceberg` catalog (Iceberg tables in
// MinIO, their catalog in Postgres), which the default SVC_EXPLORE_FALLBACK_CATALOGS names. A lake table the service
// writes is found by the catalog search of a role the tables policy opens `iceberg.*` to (engineers), read with the
// caller's own token, and neither shown to nor run for a role it does not (analysts).
const TABLE = 'iceberg.lake.events';
let ca = '';
let gw: ScriptedGateway;
let h: ExploreHarness;
let answer = '';

async function asService(sql: string): Promise<unknown[][]> {
  const res = await trinoStatement(sql, await trinoToken('svc-service'), ca);
  if (res.status !== 200 || res.error) throw new Error(`${sql}: ${res.error ?? `HTTP ${res.status}`}`);
  return res.rows;
}

const fqns = (body: { entries: { fqn: string }[] }) => body.entries.map((e) => e.fqn);

describe('explore on the lake (Iceberg on Trino)', () => {
  beforeAll(async () => {
    ({ ca } = ensureTrino());
    await asService('CREATE SCHEMA IF NOT EXISTS iceberg.lake');
    await asService(`DROP TABLE IF EXISTS ${TABLE}`);
    await asService(`CREATE TABLE ${TABLE} (event_id bigint, kind varchar, happened_at timestamp(6) with time zone)`);
    await asService(
      `INSERT INTO ${TABLE} VALUES (1, 'signup', TIMESTAMP '2026-11-01 10:00:00 UTC'), ` +
        `(2, 'login', TIMESTAMP '2026-11-02 11:00:00 UTC'), (3, 'login', TIMESTAMP '2026-11-03 12:00:00 UTC')`,
    );
    const tokens: Record<string, string> = {};
    for (const who of Object.values(as)) tokens[who.user] = await trinoToken(who.user);
    const engine = await serviceTrinoEngine(ca);
    gw = await startScriptedGateway({ models: ['svc-chat'], chat: () => answer });
    // the default catalog list: tpch, tpcds, postgresql, iceberg
    h = await exploreHarness({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat' }, { engine, tokens });
  }, 300_000);
  afterAll(async () => {
    await h?.close();
    await gw?.close();
    if (ca) await asService(`DROP TABLE IF EXISTS ${TABLE}`);
  });

  it("finds the lake table in an engineer's catalog search, with its columns as Iceberg types them", async () => {
    const res = await h.call('GET', '/catalog?q=login%20events', as.engineer);
    expect(res.status).toBe(200);
    expect(res.body.fallback).toBe(false);
    expect(res.body.entries[0]).toEqual({
      fqn: TABLE,
      name: 'events',
      description: '',
      columns: [
        { name: 'event_id', type: 'bigint', tags: [] },
        { name: 'kind', type: 'varchar', tags: [] },
        { name: 'happened_at', type: 'timestamp(6) with time zone', tags: [] },
      ],
    });
  });

  it("keeps the lake out of an analyst's catalog, searched or listed", async () => {
    const searched = await h.call('GET', '/catalog?q=login%20events', as.analyst);
    expect(searched.status).toBe(200);
    expect(fqns(searched.body)).not.toContain(TABLE);
    const listed = await h.call('GET', '/catalog', as.analyst);
    expect(fqns(listed.body).length).toBeGreaterThan(0);
    expect(fqns(listed.body).filter((f) => f.startsWith('iceberg.'))).toEqual([]);
  });

  it("answers an engineer's question on the lake table with Trino's rows, and refuses an analyst's", async () => {
    answer = `\`\`\`sql\nSELECT kind, count(*) AS events FROM ${TABLE} GROUP BY kind ORDER BY kind\n\`\`\``;
    const engineer = await h.ask(as.engineer, { question: 'how many events of each kind', force: true });
    expect(engineer.status).toBe(200);
    expect(engineer.body.preview_rows).toEqual([
      ['login', 2],
      ['signup', 1],
    ]);
    const analyst = await h.ask(as.analyst, { question: 'how many events of each kind', force: true });
    expect(analyst.status).toBe(403);
    expect(JSON.stringify(analyst.body)).not.toContain('login');
  });
});
