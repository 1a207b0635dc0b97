import { createLogger } from '../../src/platform/log.ts';
import type { QueryEngine } from '../../src/explore/engines/types.ts';
import { runQuery } from '../../src/explore/pipeline.ts';
import { embeddedEngine, exploreHarness, SAMPLE_TABLES } from '../../tests/support/explore.ts';

/**
 * Explore's whole pipeline with an instant model and engine stand-in (the engine answers a result it computed once),
 * so that only svc's own work is timed. `ask(question, force)`: force skips the cache.
 */
export async function instantPipeline() {
  const real = await embeddedEngine();
  const sql =
    'SELECT n.n_name AS nation, count(*) AS customers FROM tpch.tiny.customer c JOIN tpch.tiny.nation n ON c.c_nationkey = n.n_nationkey GROUP BY n.n_name';
  const result = await real.execute(sql, { user: 'bench' }, { timeoutMs: 10_000, reads: SAMPLE_TABLES });
  const instant: QueryEngine = {
    ...real,
    kind: 'embedded',
    estimateBytes: async () => 1000,
    scanBound: async () => 1000,
    execute: async () => result,
  };
  const h = await exploreHarness({ SVC_QUERY_CACHE_SIZE: '100000' }, { engine: instant });
  const answer = { content: `Customers per nation.\n\`\`\`sql\n${sql}\n\`\`\``, model: 'stub' };
  h.deps.chat = { complete: async () => answer, stream: async () => answer, listModels: async () => [{ id: 'svc-chat' }] };
  // an analyst may ask 600 questions an hour (policies/data.json): a new analyst every 500, so the limiter is still
  // charged on every question but never refuses one; the cache hits are one analyst's
  let asked = 0;
  const analyst = (user: string) => ({ user, roles: ['svc-analyst'], groups: [] });
  const ctx = { requestId: 'bench', log: createLogger('bench', 'silent') };
  const ask = (question: string, force: boolean) =>
    runQuery(
      h.deps,
      force ? analyst(`ana-${Math.floor(asked++ / 500)}`) : analyst('ana-cached'),
      { question, execute: true, confirm_cost: false, force, persist: true },
      ctx,
    );
  return {
    ask,
    close: async () => {
      await h.close();
      await real.close();
    },
  };
}
