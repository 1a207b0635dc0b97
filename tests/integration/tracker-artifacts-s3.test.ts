import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { createLogger } from '../../src/platform/log.ts';
import { createMetrics } from '../../src/platform/metrics.ts';
import { openArtifactRoot, type S3StoreOptions } from '../../src/platform/objects/index.ts';
import { API_PREFIXES, ARTIFACTS_PREFIX, createTrackerApp } from '../../src/tracker/app.ts';
import { artifactRoutes, runArtifactRoutes } from '../../src/tracker/artifacts/index.ts';
import { loadTrackerConfig } from '../../src/tracker/config.ts';
import type { TrackerDeps } from '../../src/tracker/deps.ts';
import { openSchemaGate, upgradeTrackerSchema } from '../../src/tracker/schema-gate.ts';
import { createTestBucket, s3Client, S3_TEST } from '../support/s3.ts';

// The artifact proxy on a real S3-compatible server (MinIO on loopback, scripts/start-s3.sh): what the MLflow
// client does through /api/2.0/mlflow-artifacts lands in the bucket under the root's prefix, and a bucket or
// credentials an operator got wrong come back as a clear, non-retried error.

let db: Database;
let bucket: string;
let drop: () => Promise<void>;

beforeAll(async () => {
  ({ bucket, drop } = await createTestBucket('tracker-artifacts'));
  db = await openPglite();
  await upgradeTrackerSchema(db);
}, 300_000);
afterAll(async () => {
  await db?.close();
  await drop?.();
});

type S3Settings = Omit<S3StoreOptions, 'bucket' | 'prefix'>;

function appOn(artifactRoot: string, s3: S3Settings = S3_TEST) {
  const deps: TrackerDeps = {
    config: loadTrackerConfig({}),
    db,
    artifacts: openArtifactRoot(artifactRoot, s3),
    artifactRoot,
    now: () => Date.now(),
    logger: createLogger('tracker', 'silent'),
    metrics: createMetrics('tracker'),
    schema: openSchemaGate(),
  };
  const app = createTrackerApp(deps);
  // Mounted here too until the app factory mounts them; a route the factory already has answers first anyway.
  for (const prefix of API_PREFIXES) app.route(prefix, runArtifactRoutes(deps));
  app.route(ARTIFACTS_PREFIX, artifactRoutes(deps));
  return app;
}

const A = '/api/2.0/mlflow-artifacts/artifacts';

async function json(res: Response | Promise<Response>): Promise<{ status: number; body: any }> {
  const r = await res;
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

describe('artifact proxy on S3', () => {
  it('uploads, downloads, lists and deletes, under the root prefix in the bucket', async () => {
    const app = appOn(`s3://${bucket}/mlruns`);
    const model = 'flavors:\n  python_function: {}\n';
    const put = await app.request(`${A}/3/run-1/artifacts/model/MLmodel`, {
      method: 'PUT',
      body: model,
      headers: { 'Content-Type': 'text/plain', 'Content-Length': String(Buffer.byteLength(model)) },
    });
    expect(await json(put)).toEqual({ status: 200, body: {} });
    expect((await app.request(`${A}/3/run-1/artifacts/metrics.json`, { method: 'PUT', body: '{"acc": 0.9}' })).status).toBe(200);

    const client = s3Client();
    const raw = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'mlruns/3/run-1/artifacts/model/MLmodel' }));
    expect(await raw.Body!.transformToString()).toBe(model);
    client.destroy();

    const got = await app.request(`${A}/3/run-1/artifacts/model/MLmodel`);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe(model);
    expect(await json(app.request(`${A}?path=3/run-1/artifacts`))).toEqual({
      status: 200,
      body: {
        files: [
          { path: 'metrics.json', is_dir: false, file_size: 12 },
          { path: 'model', is_dir: true },
        ],
      },
    });

    await db.query(
      `INSERT INTO tracker_runs (run_id, experiment_id, start_time, artifact_uri) VALUES ('run-1', 0, 1, 'mlflow-artifacts:/3/run-1/artifacts')`,
    );
    const listed = await json(app.request('/api/2.0/mlflow/artifacts/list?run_id=run-1&path=model'));
    expect(listed.body).toEqual({
      root_uri: 'mlflow-artifacts:/3/run-1/artifacts',
      files: [{ path: 'model/MLmodel', is_dir: false, file_size: model.length }],
    });

    expect((await app.request(`${A}/3/run-1/artifacts/metrics.json`, { method: 'DELETE' })).status).toBe(200);
    expect(await json(app.request(`${A}/3/run-1/artifacts/metrics.json`))).toMatchObject({
      status: 404,
      body: { error_code: 'RESOURCE_DOES_NOT_EXIST' },
    });
    expect((await app.request(`${A}/3/run-1/`, { method: 'DELETE' })).status).toBe(200);
    expect(await json(app.request(`${A}?path=3`))).toEqual({ status: 200, body: {} });
  });

  it('streams a body of unknown length larger than one part', async () => {
    const app = appOn(`s3://${bucket}/stream`);
    const chunk = new Uint8Array(256 * 1024).map((_, i) => (i * 7) % 256);
    const parts = 40; // 10 MiB: more than one 8 MiB part
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ === parts) return controller.close();
        controller.enqueue(chunk);
      },
    });
    const put = await app.request(`${A}/big/blob.bin`, { method: 'PUT', body, duplex: 'half' } as RequestInit);
    expect(put.status).toBe(200);
    const listed = await json(app.request(`${A}?path=big`));
    expect(listed.body.files).toEqual([{ path: 'blob.bin', is_dir: false, file_size: parts * chunk.length }]);
    const back = new Uint8Array(await (await app.request(`${A}/big/blob.bin`)).arrayBuffer());
    expect(back.length).toBe(parts * chunk.length);
    expect(back.subarray(back.length - chunk.length)).toEqual(chunk);
  });

  it('names the missing bucket and the endpoint, with a status the client does not retry', async () => {
    const app = appOn('s3://svc-no-such-bucket-here/mlruns');
    for (const res of [
      await json(app.request(`${A}/1/r/artifacts/x.txt`, { method: 'PUT', body: 'x' })),
      await json(app.request(`${A}?path=1`)),
      await json(app.request(`${A}/1/r/artifacts/x.txt`)),
    ]) {
      expect(res).toMatchObject({ status: 400, body: { error_code: 'INVALID_STATE' } });
      expect(res.body.message).toContain('NoSuchBucket');
      expect(res.body.message).toContain("bucket 'svc-no-such-bucket-here' does not exist");
      expect(res.body.message).toContain(S3_TEST.endpoint);
    }
  });

  it('says the credentials were refused, never what they were', async () => {
    const app = appOn(`s3://${bucket}/mlruns`, { ...S3_TEST, secretAccessKey: 'not-the-secret' });
    const res = await json(app.request(`${A}/1/r/artifacts/x.txt`, { method: 'PUT', body: 'x' }));
    expect(res).toMatchObject({ status: 400, body: { error_code: 'INVALID_STATE' } });
    expect(res.body.message).toMatch(/credentials refused.*access denied \((SignatureDoesNotMatch|InvalidAccessKeyId|AccessDenied)/);
    expect(res.body.message).toContain(S3_TEST.endpoint);
    expect(res.body.message).not.toContain('not-the-secret');
    const unknownKey = appOn(`s3://${bucket}/mlruns`, { ...S3_TEST, accessKeyId: 'nobody' });
    expect(await json(unknownKey.request(`${A}?path=1`))).toMatchObject({ status: 400, body: { error_code: 'INVALID_STATE' } });
  });

  it('answers an unreachable endpoint with TEMPORARILY_UNAVAILABLE, which the client retries', async () => {
    const app = appOn(`s3://${bucket}/mlruns`, { ...S3_TEST, endpoint: 'http://127.0.0.1:1', maxAttempts: 1 });
    const res = await json(app.request(`${A}?path=1`));
    expect(res).toMatchObject({ status: 503, body: { error_code: 'TEMPORARILY_UNAVAILABLE' } });
    expect(res.body.message).toContain('http://127.0.0.1:1');
  });
});
