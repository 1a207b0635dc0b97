import { createAnswerCache } from './cache.ts';
import type { QueryEngine } from './engines/types.ts';
import type { Defaults, ParsedStatement } from './sql/index.ts';
import { scansOf } from './statement-derived.ts';

// Step 6's estimate without a planner round trip where it can be proved. Every scan of a table costs at most the
// engine's bound for a whole scan of it (engines/types.ts, scanBound: from the table's statistics, cached per table
// for SVC_COST_STATS_TTL seconds), and a statement scans each table as often as the text says (sql/scans.ts). When
// the sum is within the limit, so is the EXPLAIN's estimate, and the EXPLAIN is not needed; otherwise it runs, and
// its answer is cached per (statement, user, the tables' bound) for SVC_QUERY_CACHE_TTL seconds: a repeated statement
// pays one round trip, and statistics read again that moved the bound (a table grown, analysed again) ask anew. A
// statement that reads no table reads 0 bytes.

export type CostEstimate = {
  /** Bytes the statement reads: the proven bound, or the engine's estimate; undefined when neither is known. */
  bytes: number | undefined;
  /** 'tables': no table is read; 'bound': within the limit by the statistics; 'explain': the engine's EXPLAIN. */
  source: 'tables' | 'bound' | 'explain';
};

export type CostEstimator = {
  estimate(statement: ParsedStatement, sql: string, user: string): Promise<CostEstimate>;
  /** The most bytes the engine's EXPLAIN can estimate for the statement, from table statistics; undefined unproven. */
  bound(statement: ParsedStatement): Promise<number | undefined>;
};

export type CostSettings = {
  limit: number;
  statsTtlSeconds: number;
  explainTtlSeconds: number;
  explainCacheSize: number;
  defaults: Defaults;
  now?: () => number;
};

const MAX_TABLES = 10_000;

export function createCostEstimator(engine: QueryEngine, settings: CostSettings): CostEstimator {
  const now = settings.now ?? Date.now;
  const bounds = new Map<string, { at: number; bound: Promise<number | undefined> }>();
  const explained = createAnswerCache<{ bytes: number | null }>({
    size: settings.explainCacheSize,
    ttlSeconds: settings.explainTtlSeconds,
    now,
  });

  /** One table's bound, from the cache while it is fresh; concurrent askers share one look-up, failures are not kept. */
  function boundOf(table: string): Promise<number | undefined> {
    const hit = bounds.get(table);
    if (hit && now() - hit.at < settings.statsTtlSeconds * 1000) return hit.bound;
    const bound = engine.scanBound(table).catch(() => {
      if (bounds.get(table)?.bound === bound) bounds.delete(table);
      return undefined; // no proof: the EXPLAIN decides
    });
    if (settings.statsTtlSeconds <= 0) return bound;
    if (bounds.size >= MAX_TABLES) bounds.clear(); // a bound on the cache itself; entries come back on demand
    bounds.set(table, { at: now(), bound });
    return bound;
  }

  /** The bound and how many tables it covers. */
  async function prove(statement: ParsedStatement): Promise<{ bytes: number; tables: number } | undefined> {
    const scans = scansOf(statement, settings.defaults);
    if (!scans) return undefined;
    const tables = [...scans.keys()];
    const each = await Promise.all(tables.map(boundOf));
    let total = 0;
    for (const [i, table] of tables.entries()) {
      const one = each[i];
      if (one === undefined) return undefined;
      total += one * scans.get(table)!;
    }
    return { bytes: total, tables: tables.length };
  }

  return {
    bound: async (statement) => (await prove(statement))?.bytes,
    async estimate(statement, sql, user) {
      const proof = await prove(statement);
      if (proof?.tables === 0) return { bytes: 0, source: 'tables' };
      if (proof && proof.bytes <= settings.limit) return { bytes: proof.bytes, source: 'bound' };
      const key = JSON.stringify([sql, user, proof?.bytes ?? null]);
      const hit = explained.get(key);
      if (hit) return { bytes: hit.bytes ?? undefined, source: 'explain' };
      const bytes = await engine.estimateBytes(sql);
      explained.set(key, { bytes: bytes ?? null });
      return { bytes, source: 'explain' };
    },
  };
}
