import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createS3Store } from '../../src/platform/objects/index.ts';
import type { WatchedPlace } from './retrieval-watch-contract.ts';
import { createTestBucket, S3_TEST } from './s3.ts';

// Places a collection may watch in tests: a temporary folder, or a prefix of a fresh MinIO bucket.

/** A temporary folder holding the watch root and, beside it, a folder outside every root. */
export async function folderPlace(): Promise<WatchedPlace & { root: string; cleanup(): Promise<void> }> {
  const base = await mkdtemp(join(tmpdir(), 'svc-watch-'));
  const root = join(base, 'watched');
  await mkdir(join(base, 'elsewhere'), { recursive: true });
  await mkdir(root);
  return {
    root,
    env: { SVC_WATCH_ROOTS: root },
    outside: pathToFileURL(join(base, 'elsewhere')).href,
    async source(name) {
      const dir = join(root, name);
      await mkdir(dir, { recursive: true });
      return {
        uri: pathToFileURL(dir).href,
        async put(path, body) {
          await mkdir(dirname(join(dir, path)), { recursive: true });
          // written beside and renamed, as a copy tool does, so a scan never reads half a file
          await writeFile(join(dir, `.${path.replace(/\//g, '_')}.part`), body);
          await rename(join(dir, `.${path.replace(/\//g, '_')}.part`), join(dir, path));
        },
        remove: (path) => rm(join(dir, path)),
      };
    },
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}

/** A fresh MinIO bucket whose prefix `watched/` is the root, read through the S3 adapter with the test keys. */
export async function s3Place(): Promise<WatchedPlace & { cleanup(): Promise<void> }> {
  const { bucket, drop } = await createTestBucket('watch');
  return {
    env: {
      SVC_WATCH_ROOTS: `s3://${bucket}/watched`,
      SVC_WATCH_S3_ENDPOINT_URL: S3_TEST.endpoint,
      OBJSTORE_ACCESS_KEY_ID: S3_TEST.accessKeyId,
      OBJSTORE_SECRET_ACCESS_KEY: S3_TEST.secretAccessKey,
    },
    outside: `s3://${bucket}/elsewhere`,
    async source(name) {
      const store = createS3Store({ ...S3_TEST, bucket, prefix: `watched/${name}` });
      return {
        uri: `s3://${bucket}/watched/${name}`,
        put: async (path, body) => void (await store.put(path, typeof body === 'string' ? Buffer.from(body) : body)),
        remove: (path) => store.delete(path),
      };
    },
    cleanup: drop,
  };
}
