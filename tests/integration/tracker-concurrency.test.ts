import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeFailures, runSuite, startTracker, type RunningTracker } from '../tracker-client/server.ts';

// 50 writers (10 processes x 5 threads of the official mlflow client) log batches into `svc serve tracker` on real
// Postgres at once; every param, tag and metric point is read back (tests/tracker-client/concurrency.py).
describe('tracker under concurrent writers', () => {
  let tracker: RunningTracker;

  beforeAll(async () => {
    tracker = await startTracker('tracker-concurrency');
  }, 900_000);
  afterAll(async () => tracker?.stop());

  it('loses no metric point, param or tag', async () => {
    const result = await runSuite('concurrency', tracker.clientEnv);
    expect(result.summary, describeFailures(result)).toBeDefined();
    expect(result.summary!.failures, describeFailures(result)).toEqual([]);
    expect(result.exitCode, describeFailures(result)).toBe(0);
    expect(result.summary!.passed).toBe(7);
  }, 900_000);
});
