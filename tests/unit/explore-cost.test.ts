import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCostEstimator, type CostSettings } from '../../src/explore/cost.ts';
import { createEmbeddedEngine } from '../../src/explore/engines/embedded.ts';
import { parseShowStats, scanBoundOf } from '../../src/explore/engines/trino-stats.ts';
import type { QueryEngine } from '../../src/explore/engines/types.ts';
import { scanCounts, validateStatement } from '../../src/explore/sql/index.ts';

// Step 6's bound: how often a statement scans each table, what one scan can cost by Trino's sizing rule, and when
// the gate asks the engine's EXPLAIN (and how long it keeps what it learned).
const defaults = { catalog: 'tpch', schema: 'tiny' };
const statementOf = (sql: string) => {
  const v = validateStatement(sql);
  if (!v.ok) throw new Error(v.reason);
  return v.statement;
};
const counts = (sql: string) => {
  const c = scanCounts(statementOf(sql), defaults);
  return c && Object.fromEntries([...c].sort());
};

describe('scanCounts', () => {
  it.each<[string, Record<string, number> | undefined]>([
    ['SELECT 1', {}],
    ["SELECT * FROM (VALUES 1, 2) t(x) CROSS JOIN UNNEST(ARRAY['a']) u(y)", {}],
    ['SELECT * FROM customer', { 'tpch.tiny.customer': 1 }],
    ['SELECT * FROM customer a JOIN tpch.tiny.customer b ON a.c_custkey = b.c_custkey', { 'tpch.tiny.customer': 2 }],
    ['SELECT * FROM nation WHERE n_regionkey IN (SELECT r_regionkey FROM region)', { 'tpch.tiny.nation': 1, 'tpch.tiny.region': 1 }],
    ['TABLE region', { 'tpch.tiny.region': 1 }],
    ['SELECT * FROM customer UNION ALL SELECT * FROM customer', { 'tpch.tiny.customer': 2 }],
    // Trino inlines a WITH query at each reference
    ['WITH x AS (SELECT * FROM customer) SELECT * FROM x a, x b', { 'tpch.tiny.customer': 2 }],
    [
      'WITH x AS (SELECT * FROM customer), y AS (SELECT * FROM x, x z) SELECT * FROM y, y w, orders',
      { 'tpch.tiny.customer': 4, 'tpch.tiny.orders': 1 },
    ],
    // an unreferenced WITH query is never planned
    ['WITH x AS (SELECT * FROM lineitem) SELECT * FROM nation', { 'tpch.tiny.nation': 1 }],
    // a WITH query named like a table reads the table inside its own definition, and hides it after
    ['WITH customer AS (SELECT * FROM customer WHERE c_acctbal > 0) SELECT * FROM customer, customer c2', { 'tpch.tiny.customer': 2 }],
    ['WITH "Customer" AS (SELECT 1 AS c_phone) SELECT c_phone FROM customer', {}],
    // a qualified name is never a WITH query
    ['WITH customer AS (SELECT 1 AS a) SELECT * FROM customer, tiny.customer', { 'tpch.tiny.customer': 1 }],
    ['SELECT * FROM (WITH x AS (SELECT * FROM nation) SELECT * FROM x) t, x', { 'tpch.tiny.nation': 1, 'tpch.tiny.x': 1 }],
    // not countable from the text: the EXPLAIN decides
    ['WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) SELECT * FROM t', undefined],
    ['SELECT "$path" FROM hive.web.clicks', undefined],
    ['SELECT * FROM hive.web."clicks$partitions"', undefined],
  ])('%j scans %j', (sql, expected) => {
    expect(counts(sql)).toEqual(expected);
  });
});

describe("one scan's bound by Trino's sizing rule", () => {
  // SHOW STATS FOR tpch.tiny.nation, as Trino 476 answers it
  const nation = parseShowStats([
    ['n_nationkey', null, 25, 0, null, '0', '24'],
    ['n_name', 177, 25, 0, null, null, null],
    ['n_regionkey', null, 5, 0, null, '0', '4'],
    ['n_comment', 1857, 25, 0, null, null, null],
    [null, null, null, null, 25, null, null],
  ]);
  const columns = [
    { column: 'n_nationkey', type: 'bigint' },
    { column: 'n_name', type: 'varchar(25)' },
    { column: 'n_regionkey', type: 'bigint' },
    { column: 'n_comment', type: 'varchar(152)' },
  ];

  it('counts null flags, fixed widths, offsets and data sizes of every column', () => {
    // 2 bigints: 25 x (1 + 8) each; 2 varchars: 25 x (1 + 4) each plus their data sizes
    expect(scanBoundOf(columns, nation)).toBe(2 * 25 * 9 + 2 * 25 * 5 + 177 + 1857);
  });

  it("takes Trino's 50 bytes a value for a variable-width column without a data size", () => {
    const stats = { ...nation, columns: nation.columns.map((c) => (c.column === 'n_comment' ? { ...c, dataSize: null } : c)) };
    expect(scanBoundOf(columns, stats)).toBe(2 * 25 * 9 + 2 * 25 * 5 + 177 + 25 * 50);
  });

  it('proves nothing without a row count, for a column without statistics, or for a type it does not size', () => {
    expect(scanBoundOf(columns, { ...nation, rowCount: null })).toBeUndefined();
    expect(scanBoundOf([...columns, { column: 'n_extra', type: 'bigint' }], nation)).toBeUndefined();
    for (const type of ['row(a bigint)', 'array(varchar)', 'map(varchar, bigint)', 'hyperloglog']) {
      expect(scanBoundOf([{ ...columns[0]!, type }], nation), type).toBeUndefined();
    }
    expect(scanBoundOf([], nation)).toBeUndefined();
  });

  it('sizes the wide fixed-width types at the widest, 16 bytes', () => {
    for (const type of ['decimal(12,2)', 'decimal(38,0)', 'timestamp(3)', 'timestamp(9) with time zone', 'uuid', 'time(6)']) {
      expect(scanBoundOf([{ column: 'n_nationkey', type }], nation), type).toBe(25 * 17);
    }
  });
});

describe('the cost estimator', () => {
  let engine: QueryEngine;
  const calls = { scanBound: 0, estimateBytes: 0 };
  let clock = 0;
  beforeAll(async () => {
    engine = await createEmbeddedEngine();
  }, 60_000);
  afterAll(() => engine.close());

  // the embedded engine, counting the questions the estimator asks it
  const counted = (failScanBound = false): QueryEngine => ({
    ...engine,
    scanBound: async (table) => {
      calls.scanBound++;
      if (failScanBound) throw new Error('statistics unavailable');
      return engine.scanBound(table);
    },
    estimateBytes: async (sql) => {
      calls.estimateBytes++;
      return engine.estimateBytes(sql);
    },
  });
  const settings = (limit: number): CostSettings => ({
    limit,
    statsTtlSeconds: 300,
    explainTtlSeconds: 60,
    explainCacheSize: 100,
    defaults,
    now: () => clock,
  });
  const JOIN =
    'SELECT n.n_name, count(*) FROM tpch.tiny.customer c JOIN tpch.tiny.nation n ON c.c_nationkey = n.n_nationkey GROUP BY n.n_name';

  it("answers from the tables' statistics within the limit, never below the EXPLAIN's estimate", async () => {
    Object.assign(calls, { scanBound: 0, estimateBytes: 0 });
    const cost = createCostEstimator(counted(), settings(1 << 30));
    const first = await cost.estimate(statementOf(JOIN), JOIN, 'ana');
    expect(first.source).toBe('bound');
    expect(first.bytes!).toBeGreaterThanOrEqual((await engine.estimateBytes(JOIN))!);
    expect(calls).toEqual({ scanBound: 2, estimateBytes: 0 });
    // within the statistics' time to live nothing is asked again; after it, each table once more
    await cost.estimate(statementOf(JOIN), JOIN, 'abe');
    expect(calls.scanBound).toBe(2);
    clock += 300_000;
    await cost.estimate(statementOf(JOIN), JOIN, 'ana');
    expect(calls).toEqual({ scanBound: 4, estimateBytes: 0 });
  });

  it('reads 0 bytes for a statement that reads no table, without asking the engine', async () => {
    Object.assign(calls, { scanBound: 0, estimateBytes: 0 });
    const cost = createCostEstimator(counted(), settings(0));
    expect(await cost.estimate(statementOf('SELECT 1 AS one'), 'SELECT 1 AS one', 'ana')).toEqual({ bytes: 0, source: 'tables' });
    expect(calls).toEqual({ scanBound: 0, estimateBytes: 0 });
  });

  it('asks the EXPLAIN above the limit, once per statement and user within its time to live', async () => {
    Object.assign(calls, { scanBound: 0, estimateBytes: 0 });
    const cost = createCostEstimator(counted(), settings(1000));
    const first = await cost.estimate(statementOf(JOIN), JOIN, 'ana');
    expect(first).toEqual({ bytes: await engine.estimateBytes(JOIN), source: 'explain' });
    expect(first.bytes!).toBeGreaterThan(1000);
    await cost.estimate(statementOf(JOIN), JOIN, 'ana');
    expect(calls.estimateBytes).toBe(1);
    await cost.estimate(statementOf(JOIN), JOIN, 'abe');
    expect(calls.estimateBytes).toBe(2);
    clock += 60_000;
    await cost.estimate(statementOf(JOIN), JOIN, 'ana');
    expect(calls.estimateBytes).toBe(3);
  });

  it('asks the EXPLAIN again within its time to live once statistics read again move the bound', async () => {
    Object.assign(calls, { scanBound: 0, estimateBytes: 0 });
    let grown = 0; // bytes the engine's statistics add to every table, as after an insert and ANALYZE
    const cost = createCostEstimator(
      { ...counted(), scanBound: async (table) => (await engine.scanBound(table))! + grown },
      { ...settings(1000), statsTtlSeconds: 10 },
    );
    await cost.estimate(statementOf(JOIN), JOIN, 'ana');
    clock += 10_000; // the statistics are read again, unchanged: the EXPLAIN's answer stands
    await cost.estimate(statementOf(JOIN), JOIN, 'ana');
    expect(calls.estimateBytes).toBe(1);
    grown = 4096;
    clock += 10_000;
    await cost.estimate(statementOf(JOIN), JOIN, 'ana');
    expect(calls.estimateBytes).toBe(2);
  });

  it('falls back to the EXPLAIN when statistics fail, and asks for them again next time', async () => {
    Object.assign(calls, { scanBound: 0, estimateBytes: 0 });
    const cost = createCostEstimator(counted(true), settings(1 << 30));
    expect((await cost.estimate(statementOf(JOIN), JOIN, 'ana')).source).toBe('explain');
    await cost.estimate(statementOf(JOIN), `${JOIN} `, 'ana');
    expect(calls).toEqual({ scanBound: 4, estimateBytes: 2 });
  });

  it('falls back to the EXPLAIN for a table the engine has no bound for', async () => {
    const cost = createCostEstimator(engine, settings(1 << 30));
    const sql = 'SELECT * FROM tpch.tiny.nation, tpch.sf1.nation';
    expect(await cost.bound(statementOf(sql))).toBeUndefined();
    expect((await cost.estimate(statementOf(sql), sql, 'ana')).source).toBe('explain');
  });
});
