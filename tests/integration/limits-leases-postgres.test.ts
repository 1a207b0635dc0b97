import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { openFreshPostgres } from '../support/pg.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';

// Leased units on the real Postgres, where two replicas' trips to one bucket run at the same time on separate
// connections (docs/audit.md, "Usage limits: leases"): however the questions interleave, the two together allow
// exactly the limit, and once both have given their leases back nothing is left out of the bucket.
describe('two replicas leasing one bucket on Postgres', () => {
  let gw: ScriptedGateway;
  let platform: Awaited<ReturnType<typeof openFreshPostgres>>;
  let replicas: ExploreHarness[];
  beforeAll(async () => {
    gw = await startScriptedGateway({ models: ['svc-chat'], chat: () => '```sql\nSELECT count(*) AS n FROM tpch.tiny.nation\n```' });
    platform = await openFreshPostgres('limits_leases');
    const env = { SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat', SVC_LIMIT_EXPLORE_QUESTIONS: '60/h' };
    replicas = [];
    for (let i = 0; i < 2; i++) replicas.push(await exploreHarness(env, { db: platform.db, conformance: false }));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(replicas.map((h) => h.close()));
    await gw.close();
    await platform.cleanup();
  });

  it('allow exactly the limit together, sixteen questions in flight at a time', async () => {
    const statuses: number[] = [];
    let n = 0;
    for (let round = 0; round < 6; round++) {
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          replicas[i % 2]!.ask(as.user, { question: `how many nations ${n++}`, execute: false, persist: false }),
        ),
      );
      statuses.push(...answers.map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    // the leases go back when a replica closes: the bucket then holds what no lease holds, and no lease is left
    await Promise.all(replicas.map((h) => h.deps.limiter.close?.()));
    const leases = await platform.db.query(`SELECT holder, units FROM limit_leases WHERE user_id = 'uma'`);
    expect(leases).toEqual([]);
    const [bucket] = await platform.db.query<{ tokens: number }>(
      `SELECT tokens FROM limit_buckets WHERE user_id = 'uma' AND service = 'explore' AND action = 'question'`,
    );
    expect(bucket!.tokens).toBeLessThan(1);
  }, 120_000);
});
