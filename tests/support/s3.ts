// The real S3-compatible server (MinIO) for integration tests. ensureS3() checks it answers, starting it with
// scripts/start-s3.sh when nothing does; createTestBucket() makes a fresh bucket for one test file.
//   SVC_IT_S3_URL  endpoint (default http://127.0.0.1:19000); the credentials are the fixed test ones below.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CreateBucketCommand, DeleteBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { createS3Store } from '../../src/platform/objects/index.ts';

export const S3_TEST = {
  endpoint: process.env.SVC_IT_S3_URL || 'http://127.0.0.1:19000',
  region: 'us-east-1',
  accessKeyId: 'svcminio',
  secretAccessKey: 'svcminio-secret',
};

const startScript = fileURLToPath(new URL('../../scripts/start-s3.sh', import.meta.url));

async function ready(): Promise<boolean> {
  try {
    const res = await fetch(`${S3_TEST.endpoint}/minio/health/ready`, { signal: AbortSignal.timeout(2_000) });
    return res.ok;
  } catch {
    return false;
  }
}

let started: Promise<void> | undefined;
export function ensureS3(): Promise<void> {
  started ??= (async () => {
    if (await ready()) return;
    const port = new URL(S3_TEST.endpoint).port || '80';
    // Builds MinIO on the first run ever (a few minutes), then starts it on loopback.
    await promisify(execFile)('bash', [startScript, port], { timeout: 600_000 });
    if (!(await ready())) throw new Error(`S3 test server not ready at ${S3_TEST.endpoint} after scripts/start-s3.sh`);
  })();
  return started;
}

export function s3Client(): S3Client {
  return new S3Client({
    endpoint: S3_TEST.endpoint,
    region: S3_TEST.region,
    forcePathStyle: true,
    credentials: { accessKeyId: S3_TEST.accessKeyId, secretAccessKey: S3_TEST.secretAccessKey },
  });
}

// A bucket of its own for one test file; drop() empties and removes it.
export async function createTestBucket(label: string): Promise<{ bucket: string; drop: () => Promise<void> }> {
  await ensureS3();
  const clean = label
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 40);
  const bucket = `t-${clean}-${randomBytes(4).toString('hex')}`;
  const client = s3Client();
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    bucket,
    async drop() {
      const store = createS3Store({ ...S3_TEST, bucket });
      for (const e of await store.list('')) await store.delete(e.isDir ? `${e.key}/` : e.key);
      await client.send(new DeleteBucketCommand({ Bucket: bucket }));
      client.destroy();
    },
  };
}
