import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEmbeddedEngine, toEmbeddedNames } from '../../src/explore/engines/embedded.ts';
import { EngineError, type QueryEngine } from '../../src/explore/engines/types.ts';
import { SAMPLE_TABLES } from '../support/explore.ts';

// The embedded query engine: the TPC-H-shaped sample under Trino's names, read-only, time-limited.
// A replaced worker loads the sample again: seconds on a quiet machine, tens of seconds on a loaded one.
describe('embedded engine', { timeout: 180_000 }, () => {
  let engine: QueryEngine;
  const caller = { user: 'ana' };
  beforeAll(async () => {
    engine = await createEmbeddedEngine();
  }, 60_000);
  afterAll(() => engine.close());

  it('holds the tpch.tiny tables at their standard sizes', async () => {
    const counts: Record<string, number> = {};
    for (const t of ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders']) {
      const r = await engine.execute(`SELECT count(*) AS n FROM tpch.tiny.${t}`, caller, { timeoutMs: 5000, reads: SAMPLE_TABLES });
      counts[t] = r.rows[0]![0] as number;
    }
    expect(counts).toEqual({ region: 5, nation: 25, supplier: 100, customer: 1500, part: 2000, partsupp: 8000, orders: 15000 });
  });

  it('is deterministic and answers "how many customers per nation" with Trino names', async () => {
    const sql = `SELECT n.n_name, count(*) AS customers FROM tpch.tiny.customer c JOIN tpch.tiny.nation n ON c.c_nationkey = n.n_nationkey GROUP BY n.n_name ORDER BY n.n_name`;
    const a = await engine.execute(sql, caller, { timeoutMs: 5000, reads: SAMPLE_TABLES });
    expect(a.columns).toEqual([
      { name: 'n_name', type: 'varchar' },
      { name: 'customers', type: 'bigint' },
    ]);
    expect(a.rows).toHaveLength(25);
    expect(a.rows.reduce((s, r) => s + (r[1] as number), 0)).toBe(1500);
    const fresh = await createEmbeddedEngine();
    expect((await fresh.execute(sql, caller, { timeoutMs: 5000, reads: SAMPLE_TABLES })).rows).toEqual(a.rows);
    await fresh.close();
  });

  it('lists columns with Trino type names, only for the tpch catalog', async () => {
    const cols = await engine.columns(['tpch', 'iceberg']);
    expect(cols).toContainEqual({ catalog: 'tpch', schema: 'tiny', table: 'customer', column: 'c_phone', type: 'varchar' });
    expect(cols).toContainEqual({ catalog: 'tpch', schema: 'tiny', table: 'orders', column: 'o_totalprice', type: 'double' });
    expect(await engine.columns(['iceberg'])).toEqual([]);
  });

  it('refuses to write even when handed a write', async () => {
    await expect(engine.execute('DELETE FROM tpch.tiny.nation', caller, { timeoutMs: 5000, reads: SAMPLE_TABLES })).rejects.toMatchObject({
      kind: 'forbidden',
    });
    expect(
      (await engine.execute('SELECT count(*) FROM tpch.tiny.nation', caller, { timeoutMs: 5000, reads: SAMPLE_TABLES })).rows[0]![0],
    ).toBe(25);
  });

  it('cancels a statement past its time limit', async () => {
    const started = Date.now();
    const err = await engine.execute('SELECT pg_sleep(5)', caller, { timeoutMs: 200, reads: SAMPLE_TABLES }).catch((e) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(4000);
    // the engine is usable again afterwards
    expect(
      (await engine.execute('SELECT count(*) FROM tpch.tiny.region', caller, { timeoutMs: 120_000, reads: SAMPLE_TABLES })).rows[0]![0],
    ).toBe(5);
  });

  it('answers calls that waited behind a statement cancelled at its limit: their own limits start when they run', async () => {
    const slow = engine.execute('SELECT pg_sleep(60)', caller, { timeoutMs: 300, reads: SAMPLE_TABLES }).catch((e: unknown) => e);
    const brief = engine.execute('SELECT count(*) FROM tpch.tiny.region', { user: 'bob' }, { timeoutMs: 5000, reads: SAMPLE_TABLES });
    const patient = engine.execute('SELECT count(*) FROM tpch.tiny.nation', { user: 'cy' }, { timeoutMs: 120_000, reads: SAMPLE_TABLES });
    expect(await slow).toMatchObject({ kind: 'timeout' });
    expect((await brief).rows).toEqual([[5]]);
    expect((await patient).rows).toEqual([[25]]);
  });

  it('refuses a result heavier than its byte limit, and answers the next call', async () => {
    const err = await engine
      .execute(`SELECT lpad('y', 100000, 'y') AS big FROM tpch.tiny.region`, caller, {
        timeoutMs: 20_000,
        maxBytes: 200_000,
        reads: SAMPLE_TABLES,
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'too_large', message: expect.stringContaining('SVC_MAX_RESULT_BYTES') });
    const ok = await engine.execute(`SELECT lpad('y', 100000, 'y') AS big FROM tpch.tiny.region LIMIT 1`, caller, {
      timeoutMs: 20_000,
      maxBytes: 200_000,
      reads: SAMPLE_TABLES,
    });
    expect(ok.rows).toHaveLength(1);
  });

  it('runs statements as a role that reads only the sample: no files, no server settings', async () => {
    for (const sql of ["SELECT pg_ls_dir('.')", "SELECT current_setting('data_directory')", "SELECT pg_read_file('PG_VERSION')"]) {
      await expect(engine.execute(sql, caller, { timeoutMs: 5000, reads: SAMPLE_TABLES })).rejects.toMatchObject({ kind: 'forbidden' });
    }
  });

  it('refuses a statement whose own plan reads a relation validation did not approve, naming it, before it runs', async () => {
    const err = await engine
      .execute('SELECT count(*) FROM tpch.tiny.customer', caller, { timeoutMs: 5000, reads: ['tpch.tiny.nation'] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'forbidden', message: expect.stringContaining('plan reads tpch.tiny.customer') });
    // Postgres finds an unqualified catalog name in pg_catalog first; the role may not read it either way
    for (const sql of [
      'SELECT count(*) FROM pg_stats',
      'SELECT count(*) FROM pg_catalog.pg_class',
      'SELECT count(*) FROM information_schema.columns',
    ]) {
      await expect(engine.execute(sql, caller, { timeoutMs: 5000, reads: SAMPLE_TABLES }), sql).rejects.toMatchObject({
        kind: 'forbidden',
      });
    }
  });

  it('estimates bytes from the relations a statement reads', async () => {
    const one = await engine.estimateBytes('SELECT * FROM tpch.tiny.nation');
    const big = await engine.estimateBytes('SELECT * FROM tpch.tiny.lineitem l JOIN tpch.tiny.orders o ON l.l_orderkey = o.o_orderkey');
    expect(one).toBeGreaterThan(0);
    expect(big!).toBeGreaterThan(1_000_000);
    expect(big!).toBeGreaterThan(one!);
    expect(await engine.estimateBytes('SELECT FROM nowhere at all')).toBeUndefined();
  });

  it('maps names outside literals only', () => {
    expect(toEmbeddedNames(`SELECT 'tpch.tiny.x', "tpch.tiny" FROM TPCH . tiny.customer, mytpch.tiny.t`)).toBe(
      `SELECT 'tpch.tiny.x', "tpch.tiny" FROM tiny.customer, mytpch.tiny.t`,
    );
  });
});

// The sample's workers hold about 100 MB each: none runs before the first call, and each stops once idle.
describe('embedded engine workers', { timeout: 180_000 }, () => {
  const caller = { user: 'ana' };
  const count = async (engine: QueryEngine, table: string) =>
    (await engine.execute(`SELECT count(*) FROM tpch.tiny.${table}`, caller, { timeoutMs: 120_000, reads: SAMPLE_TABLES })).rows;

  it('start with the first call, stop once no call has come for their idle time, and start again for the next', async () => {
    const engine = await createEmbeddedEngine({ idleMs: 200 });
    try {
      expect(engine.running).toBe(0);
      expect(engine.starts).toBe(0);
      expect(await count(engine, 'region')).toEqual([[5]]);
      expect(engine.starts).toBe(1);
      await vi.waitFor(() => expect(engine.running).toBe(0), { timeout: 30_000, interval: 100 });
      expect(await count(engine, 'nation')).toEqual([[25]]);
      expect(engine.starts).toBe(2); // stopped when idle, and started again for the next call
      expect(await engine.columns(['tpch'])).toContainEqual({
        catalog: 'tpch',
        schema: 'tiny',
        table: 'region',
        column: 'r_name',
        type: 'varchar',
      });
    } finally {
      await engine.close();
    }
  });

  it("answer a call that came before any worker ran, whatever the queue's limit: a start is not a wait behind others", async () => {
    const engine = await createEmbeddedEngine({ workers: 1, queueTimeoutMs: 1 });
    try {
      expect(await count(engine, 'region')).toEqual([[5]]);
      expect(engine.starts).toBe(1);
    } finally {
      await engine.close();
    }
  });
});
