import { describe } from 'vitest';
import { createEmbeddedEngine } from '../../src/explore/engines/embedded.ts';
import { as } from '../support/explore.ts';
import { noPersonalValueReachesAnAnalyst } from '../support/hostile-property.ts';
import { MARK, MARK_SAMPLE_SQL, PERSONAL_COLUMNS, TWIN_SAMPLE_SQL } from '../support/hostile-sql.ts';
import type { QueryEngine } from '../../src/explore/engines/types.ts';
import { ensureTrino, serviceTrinoEngine, trinoStatement, trinoToken } from '../support/trino.ts';

// The larger run of the property in the unit suite: more statements on the marked embedded sample, and statements on
// the real Trino (scripts/start-trino.sh), where every personal value of tpch.tiny is read first by an
// administrator and any of them, whole and in any case, in an analyst's answer is a leak.
describe('no personal value reaches an analyst (embedded engine, marked sample, larger run)', () => {
  noPersonalValueReachesAnAnalyst({
    runs: Number(process.env.SVC_PROPERTY_RUNS ?? 800),
    seed: 424242,
    engine: () => createEmbeddedEngine({ afterSample: MARK_SAMPLE_SQL }),
    twin: { engine: () => createEmbeddedEngine({ afterSample: TWIN_SAMPLE_SQL }) },
    leaks: (text) => text.includes(MARK),
  });
});

describe('no personal value reaches an analyst (Trino)', () => {
  // Trino's data cannot be changed, so its own column masks change it per user (scripts/trino/rules.json): to
  // analyst-mark every personal value of customer reads as MARKs, to analyst-twin as the twin's marks. Either one's
  // answer carrying a real personal value (read first by an administrator) or a mark is a leak; the two answers
  // differing is a personal value used somewhere in the statement.
  const personal: string[] = [];
  const tokens: Record<string, string> = {};
  let engine: Promise<QueryEngine> | undefined;
  const mark = { user: 'analyst-mark', role: 'svc-analyst' };
  const twin = { user: 'analyst-twin', role: 'svc-analyst' };
  const trino = () =>
    (engine ??= (async () => {
      const { ca } = ensureTrino();
      for (const who of [...Object.values(as), mark, twin]) tokens[who.user] = await trinoToken(who.user);
      const admin = await trinoToken('ada');
      for (const { table, column } of PERSONAL_COLUMNS) {
        const { rows, error } = await trinoStatement(`SELECT DISTINCT ${column} FROM tpch.tiny.${table}`, admin, ca);
        if (error) throw new Error(error);
        for (const [v] of rows) personal.push(JSON.stringify(String(v)).slice(1, -1).toLowerCase());
      }
      return await serviceTrinoEngine(ca);
    })());
  noPersonalValueReachesAnAnalyst({
    runs: Number(process.env.SVC_PROPERTY_TRINO_RUNS ?? 250),
    seed: 4242,
    engine: trino,
    as: mark,
    twin: { engine: trino, as: twin, unorderedRowsVary: true },
    leaks: (text) => {
      const lower = text.toLowerCase();
      return text.includes(MARK) || personal.some((v) => lower.includes(v));
    },
    tokens,
  });
});
