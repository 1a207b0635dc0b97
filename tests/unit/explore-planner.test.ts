import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogTags } from '../../src/platform/catalog-tags.ts';
import { readCatalog, type CatalogEntry } from '../../src/explore/catalog.ts';
import { createEmbeddedEngine } from '../../src/explore/engines/embedded.ts';
import type { QueryEngine } from '../../src/explore/engines/types.ts';
import { planQuestion } from '../../src/explore/planner.ts';
import { validateStatement } from '../../src/explore/sql/index.ts';
import { SAMPLE_TABLES } from '../support/explore.ts';

// The offline planner's SQL runs on the sample and answers the question it was asked.
describe('offline planner', () => {
  let engine: QueryEngine;
  let tables: CatalogEntry[];
  const run = async (sql: string) => (await engine.execute(sql, { user: 'ana' }, { timeoutMs: 10_000, reads: SAMPLE_TABLES })).rows;

  beforeAll(async () => {
    engine = await createEmbeddedEngine();
    tables = await readCatalog(engine, ['tpch'], await loadCatalogTags());
  }, 60_000);
  afterAll(() => engine.close());

  const plan = (q: string) => {
    const p = planQuestion(q, tables);
    if (!p || 'refusal' in p) throw new Error(`no plan for ${q}: ${p?.refusal}`);
    expect(validateStatement(p.sql)).toMatchObject({ ok: true });
    return p;
  };

  it('counts customers per nation', async () => {
    const p = plan('How many customers are there per nation?');
    expect(p.tables).toEqual(['tpch.tiny.customer', 'tpch.tiny.nation']);
    const rows = await run(p.sql);
    expect(rows).toHaveLength(25);
    expect(rows.reduce((s, r) => s + (r[1] as number), 0)).toBe(1500);
    expect(typeof rows[0]![0]).toBe('string');
  });

  it('counts a table', async () => {
    expect(await run(plan('how many orders are there').sql)).toEqual([[15000]]);
  });

  it('counts with an equality filter', async () => {
    const [[n]] = (await run(plan("how many customers where market segment is 'BUILDING'").sql)) as [[number]];
    const [[all]] = (await run("SELECT count(*) FROM tpch.tiny.customer WHERE c_mktsegment = 'BUILDING'")) as [[number]];
    expect(n).toBe(all);
    expect(n).toBeGreaterThan(0);
  });

  it('lists the top N rows by a measure', async () => {
    const p = plan('top 5 orders by total price');
    expect(p.sql).toContain('ORDER BY o_totalprice DESC LIMIT 5');
    const rows = await run(p.sql);
    expect(rows).toHaveLength(5);
  });

  it('aggregates a measure grouped by a column', async () => {
    const p = plan('average account balance by market segment');
    expect(p.sql).toMatch(/avg\(s\.c_acctbal\)/);
    expect(await run(p.sql)).toHaveLength(5);
  });

  it('groups a count by the year of a date column, in time order', async () => {
    const p = plan('how many orders per year');
    expect(p.sql).toMatch(/GROUP BY extract\(year FROM s\.o_orderdate\) ORDER BY year/);
    const rows = (await run(p.sql)) as [number, number][];
    expect(rows.length).toBeGreaterThan(1);
    expect(rows.map((r) => Number(r[0]))).toEqual([...rows.map((r) => Number(r[0]))].sort());
    expect(rows.reduce((s, r) => s + r[1], 0)).toBe(15000);
  });

  it('groups by the month of the date column the question names', async () => {
    const p = plan('how many lineitems per ship date month');
    expect(p.sql).toContain("date_trunc('month', s.l_shipdate)");
  });

  it('refuses what it reads only in part, never answering the plain count', () => {
    expect(planQuestion('how many orders per colour', tables)).toEqual({ refusal: "no column of orders matches 'colour'" });
    expect(planQuestion('how many regions per year', tables)).toEqual({ refusal: 'region has no date column to group by year' });
    expect(planQuestion('how many orders in 1995', tables)).toMatchObject({ refusal: expect.stringContaining("'1995'") });
    expect(planQuestion('how many orders where colour is red', tables)).toEqual({ refusal: "no column of orders matches 'colour'" });
  });

  it('has no plan for what it does not understand, or for tables it may not use', () => {
    expect(planQuestion('why did revenue drop last spring compared with our forecast', tables)).toBeUndefined();
    expect(
      planQuestion(
        'how many customers per nation',
        tables.filter((t) => t.name !== 'customer'),
      ),
    ).toBeUndefined();
  });
});
