import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { STATEMENTS } from '../../bench/explore/statements.ts';
import { createCostEstimator } from '../../src/explore/cost.ts';
import { EngineError, type QueryEngine } from '../../src/explore/engines/types.ts';
import { DEFAULTS } from '../../src/explore/pipeline.ts';
import { ensureLimit, scanCounts, validateStatement } from '../../src/explore/sql/index.ts';
import { hostileStatement } from '../support/hostile-sql.ts';
import { ensureTrino, serviceTrinoEngine } from '../support/trino.ts';

// The cost gate passes a statement on its bound alone only if the EXPLAIN could not have stopped it: on the real
// Trino, for every statement the benchmark and the explore suites send (the SQL written in their files, and the
// hostile generator's statements at the seed the Trino property run uses), the bound, where there is one, is at
// least the estimate of Trino's EXPLAIN (TYPE IO), and that estimate is known.
const root = join(import.meta.dirname, '../..');

/** Every SQL string literal in the explore test files: what they hand the scripted model or the engine. */
function suiteStatements(): string[] {
  const files = [
    ...readdirSync(join(root, 'tests/unit'))
      .filter((f) => f.startsWith('explore-'))
      .map((f) => join('tests/unit', f)),
    ...readdirSync(join(root, 'tests/integration'))
      .filter((f) => f.startsWith('explore-'))
      .map((f) => join('tests/integration', f)),
    'tests/support/explore-http-contract.ts',
    'tests/e2e/explore-console.test.ts',
  ];
  const out: string[] = [];
  const literal = /(['"`])((?:```sql\\n)?(?:SELECT|WITH|VALUES|TABLE)\b(?:\\.|(?!\1)[^\\])*)\1/gi;
  for (const file of files) {
    for (const m of readFileSync(join(root, file), 'utf8').matchAll(literal)) {
      const text = m[2]!.replace(/^```sql\\n/, '').replace(/\\n```$/, '');
      if (text.includes('${')) continue; // a template: its pieces are listed elsewhere
      out.push(text.replace(/\\n/g, '\n').replace(/\\(['"`\\])/g, '$1'));
    }
  }
  return out;
}

// Filters tpch pushes into its scans, and other scales, where the scan's statistics are not the table's
const PUSHED_DOWN = [
  "SELECT count(*) FROM tpch.tiny.orders WHERE o_orderstatus = 'F'",
  "SELECT o_orderkey, o_comment FROM tpch.tiny.orders WHERE o_orderstatus IN ('O', 'P') AND o_totalprice > 1000",
  "SELECT l_comment FROM tpch.tiny.lineitem WHERE l_shipmode = 'AIR' AND l_returnflag = 'R'",
  "SELECT * FROM tpch.sf1.orders WHERE o_orderstatus = 'F'",
  'SELECT c_name, c_comment FROM tpch.sf1.customer',
  'SELECT * FROM tpch.sf1.lineitem',
  'SELECT * FROM tpch.sf100.lineitem',
  'SELECT a.n_name, b.n_comment FROM tpch.tiny.nation a, tpch.tiny.nation b, tpch.tiny.nation c',
];

describe('the cost bound on Trino', () => {
  let engine: QueryEngine;
  beforeAll(async () => {
    const { ca } = ensureTrino();
    engine = await serviceTrinoEngine(ca);
  }, 300_000);

  it('is never below the EXPLAIN for a statement of the benchmark or the explore suites', async () => {
    const sources = [...STATEMENTS, ...suiteStatements(), ...PUSHED_DOWN, ...fc.sample(hostileStatement(), { seed: 4242, numRuns: 250 })];
    const cost = createCostEstimator(engine, {
      limit: Number.MAX_SAFE_INTEGER,
      statsTtlSeconds: 3600,
      explainTtlSeconds: 0,
      explainCacheSize: 0,
      defaults: DEFAULTS,
    });
    const seen = new Set<string>();
    const broken: string[] = [];
    let proven = 0;
    let readingTables = 0;
    for (const source of sources) {
      const v = validateStatement(source);
      if (!v.ok) continue; // refused before the gate
      const sql = ensureLimit(v.statement.sql, v.statement, 10_000);
      if (seen.has(sql)) continue;
      seen.add(sql);
      const bound = await cost.bound(v.statement);
      if (bound === undefined) continue;
      const explained = await engine.estimateBytes(sql).catch((err: unknown) => {
        if (err instanceof EngineError && (err.kind === 'invalid' || err.kind === 'forbidden')) return 'refused' as const;
        throw err;
      });
      if (explained === 'refused') continue; // Trino cannot plan it: execution refuses it too
      proven++;
      // a statement that reads no table reads 0 bytes; Trino lists no input for it (an unknown estimate)
      if (scanCounts(v.statement, DEFAULTS)!.size === 0) {
        expect(bound).toBe(0);
        continue;
      }
      readingTables++;
      if (explained === undefined || explained > bound) broken.push(`${sql}\n  bound ${bound}, EXPLAIN ${explained ?? 'unknown'}`);
    }
    expect(broken).toEqual([]);
    // the check is worth little unless many statements were proved, most of them reading tables
    expect(readingTables).toBeGreaterThan(100);
    expect(proven).toBeGreaterThan(readingTables);
  }, 900_000);

  it('proves no bound where the statistics are unknown, so the EXPLAIN decides', async () => {
    expect(await engine.scanBound('tpch.sf100.lineitem')).toBeUndefined();
    expect(await engine.scanBound('tpch.tiny.no_such_table')).toBeUndefined();
    // the system connector is not one whose scans keep the table's statistics
    expect(await engine.scanBound('system.runtime.queries')).toBeUndefined();
    expect(await engine.scanBound('tpch.tiny.nation')).toBeGreaterThan(0);
  });
});
