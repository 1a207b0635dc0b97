import { describe } from 'vitest';
import { createEmbeddedEngine } from '../../src/explore/engines/embedded.ts';
import { createTrinoEngine } from '../../src/explore/engines/trino.ts';
import { as } from '../support/explore.ts';
import { noPersonalValueReachesAnAnalyst } from '../support/hostile-property.ts';
import { MARK, MARK_SAMPLE_SQL, PERSONAL_COLUMNS, TWIN_SAMPLE_SQL } from '../support/hostile-sql.ts';
import { ensureTrino, trinoStatement, trinoToken, TRINO_URL } from '../support/trino.ts';

// The larger run of the property in the unit suite: more statements on the marked embedded sample, and statements on
// the real Trino (scripts/start-trino.sh), where every personal value of tpch.tiny is read first by an
// administrator and any of them, whole and in any case, in an analyst's answer is a leak.
describe('no personal value reaches an analyst (embedded engine, marked sample, larger run)', () => {
  noPersonalValueReachesAnAnalyst({
    runs: Number(process.env.SVC_PROPERTY_RUNS ?? 800),
    seed: 424242,
    engine: () => createEmbeddedEngine({ afterSample: MARK_SAMPLE_SQL }),
    twin: () => createEmbeddedEngine({ afterSample: TWIN_SAMPLE_SQL }),
    leaks: (text) => text.includes(MARK),
  });
});

describe('no personal value reaches an analyst (Trino)', () => {
  const personal: string[] = [];
  const tokens: Record<string, string> = {};
  noPersonalValueReachesAnAnalyst({
    runs: Number(process.env.SVC_PROPERTY_TRINO_RUNS ?? 250),
    seed: 4242,
    async engine() {
      const { ca } = ensureTrino();
      for (const who of Object.values(as)) tokens[who.user] = await trinoToken(who.user);
      const admin = await trinoToken('ada');
      for (const { table, column } of PERSONAL_COLUMNS) {
        const { rows, error } = await trinoStatement(`SELECT DISTINCT ${column} FROM tpch.tiny.${table}`, admin, ca);
        if (error) throw new Error(error);
        for (const [v] of rows) personal.push(JSON.stringify(String(v)).slice(1, -1).toLowerCase());
      }
      return createTrinoEngine({
        url: TRINO_URL,
        ca,
        serviceUser: 'svc-service',
        serviceToken: await trinoToken('svc-service'),
        metadataTimeoutMs: 60_000,
      });
    },
    leaks: (text) => {
      const lower = text.toLowerCase();
      return personal.some((v) => lower.includes(v));
    },
    tokens,
  });
});
