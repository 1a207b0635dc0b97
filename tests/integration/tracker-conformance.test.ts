import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeFailures, runSuite, startTracker, type RunningTracker } from '../tracker-client/server.ts';
import { s3Client } from '../support/s3.ts';

// The official MLflow 3.x Python client against `svc serve tracker` on real Postgres and MinIO: every call the issue
// lists succeeds and reads back what it wrote (tests/tracker-client/conformance.py, proven on the real mlflow server).
describe('tracker conformance with the official mlflow client', () => {
  let tracker: RunningTracker;

  beforeAll(async () => {
    tracker = await startTracker('tracker-conformance');
  }, 900_000);
  afterAll(async () => tracker?.stop());

  it('passes every check of the conformance suite, with the artifacts in the S3 bucket', async () => {
    const result = await runSuite('conformance', tracker.clientEnv);
    expect(result.summary, describeFailures(result)).toBeDefined();
    expect(result.summary!.failures, describeFailures(result)).toEqual([]);
    expect(result.exitCode, describeFailures(result)).toBe(0);
    expect(result.summary!.passed).toBeGreaterThanOrEqual(42);

    // The run artifacts and the model files went to the bucket under the configured prefix.
    const s3 = s3Client();
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: tracker.bucket, Prefix: 'mlflow/' }));
    s3.destroy();
    const keys = (listed.Contents ?? []).map((o) => o.Key!);
    expect(
      keys.some((k) => k.endsWith('/tree/sub/deeper/c.txt')),
      keys.slice(0, 20).join('\n'),
    ).toBe(true);
    expect(
      keys.some((k) => k.endsWith('/MLmodel')),
      keys.slice(0, 20).join('\n'),
    ).toBe(true);
  }, 900_000);
});
