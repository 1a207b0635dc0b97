import { describe } from 'vitest';
import { createEmbeddedEngine } from '../../src/explore/engines/embedded.ts';
import { noPersonalValueReachesAnAnalyst } from '../support/hostile-property.ts';
import { MARK, MARK_SAMPLE_SQL, TWIN_SAMPLE_SQL } from '../support/hostile-sql.ts';

// On the embedded engine, with every personal value of the sample replaced by a marker that any derived text
// carries too (a substring, a case change, a concatenation), so a single leaked character is seen; and a twin engine
// whose marks differ row by row answers every statement alike, so no condition, join, grouping or order used a
// personal value. A fixed seed; the integration suite runs more statements, and runs them on Trino as well.
describe('no personal value reaches an analyst, whatever the model writes (embedded engine, marked sample)', () => {
  noPersonalValueReachesAnAnalyst({
    runs: Number(process.env.SVC_PROPERTY_RUNS ?? 150),
    seed: Number(process.env.SVC_PROPERTY_SEED ?? 20261124),
    engine: () => createEmbeddedEngine({ afterSample: MARK_SAMPLE_SQL }),
    twin: { engine: () => createEmbeddedEngine({ afterSample: TWIN_SAMPLE_SQL }) },
    leaks: (text) => text.includes(MARK),
  });
});
