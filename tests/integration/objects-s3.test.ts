import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Store } from '../../src/platform/objects/index.ts';
import { expectCode, objectStoreContract, readAll, text } from '../support/objects-contract.ts';
import { createTestBucket, s3Client, S3_TEST } from '../support/s3.ts';

let bucket: string;
let drop: () => Promise<void>;
let n = 0;
beforeAll(async () => {
  ({ bucket, drop } = await createTestBucket('objects-s3'));
});
afterAll(async () => {
  await drop?.();
});

// Each contract test gets its own prefix in the file's bucket, so it starts empty.
objectStoreContract('s3 (MinIO)', async () => createS3Store({ ...S3_TEST, bucket, prefix: `contract-${++n}/` }));

describe('s3 store', () => {
  it('keeps keys under its prefix, where any S3 client finds them', async () => {
    const store = createS3Store({ ...S3_TEST, bucket, prefix: 'layout/run-1' });
    expect(store.describe()).toBe(`s3://${bucket}/layout/run-1/`);
    await store.put('model/MLmodel', Buffer.from('flavors: {}'));
    const client = s3Client();
    const raw = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'layout/run-1/model/MLmodel' }));
    expect(await raw.Body!.transformToString()).toBe('flavors: {}');
    const root = createS3Store({ ...S3_TEST, bucket, prefix: 'layout' });
    expect(await root.list('')).toEqual([{ key: 'run-1', size: 0, isDir: true }]);
    client.destroy();
  });

  it('skips folder markers written by other tools', async () => {
    const client = s3Client();
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'markers/dir/', Body: '' }));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'markers/dir/f.txt', Body: 'f' }));
    const store = createS3Store({ ...S3_TEST, bucket, prefix: 'markers' });
    expect(await store.list('')).toEqual([{ key: 'dir', size: 0, isDir: true }]);
    expect(await store.list('dir')).toEqual([{ key: 'dir/f.txt', size: 1 }]);
    client.destroy();
  });

  it('sends a large body of unknown length in parts, and one of known length in one request', async () => {
    const store = createS3Store({ ...S3_TEST, bucket, prefix: 'parts' });
    const body = () =>
      Readable.from(
        (function* () {
          for (let i = 0; i < 72; i++) yield Buffer.alloc(256 * 1024, i);
        })(),
      );
    expect(await store.put('unknown.bin', body())).toEqual({ size: 18 * 1024 * 1024 });
    expect(await store.put('known.bin', body(), { contentLength: 18 * 1024 * 1024 })).toEqual({ size: 18 * 1024 * 1024 });
    const client = s3Client();
    const etag = async (k: string) => (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: `parts/${k}` }))).ETag;
    expect(await etag('unknown.bin')).toMatch(/-3"$/); // a multipart ETag counts its parts: 8 + 8 + 2 MiB
    expect(await etag('known.bin')).not.toMatch(/-\d+"$/);
    client.destroy();
  });

  it('aborts a failed multipart upload so no parts stay behind', async () => {
    const store = createS3Store({ ...S3_TEST, bucket, prefix: 'aborted' });
    let chunks = 0;
    const failing = new Readable({
      read() {
        if (++chunks > 80) return void this.destroy(new Error('client went away'));
        this.push(Buffer.alloc(256 * 1024, 7)); // 20 MiB before failing: two full parts sent
      },
    });
    await expectCode(store.put('big.bin', failing), 'FAILED');
    const client = s3Client();
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: 'aborted/' }));
    expect(uploads.Uploads ?? []).toEqual([]);
    expect(await store.get('big.bin')).toBeNull();
    client.destroy();
  });

  it('streams a download rather than answering with a buffer', async () => {
    const store = createS3Store({ ...S3_TEST, bucket, prefix: 'download' });
    await store.put('a.txt', Buffer.from('streamed'));
    const got = await store.get('a.txt');
    expect(got!.body).toBeInstanceOf(Readable);
    expect((await readAll(got!.body)).toString()).toBe('streamed');
    expect(await text(store, 'a.txt')).toBe('streamed');
  });
});

describe('s3 store failures', () => {
  it('says which bucket is missing, on every operation', async () => {
    const store = createS3Store({ ...S3_TEST, bucket: 'no-such-bucket-svc' });
    for (const op of [
      () => store.put('k', Buffer.from('x')),
      () => store.put('k', Readable.from([Buffer.from('x')])),
      () => store.put('k', Readable.from([Buffer.from('x')]), { contentLength: 1 }),
      () => store.get('k'),
      () => store.list(''),
      () => store.delete('k'),
      () => store.delete('dir/'),
    ]) {
      const err = await expectCode(op(), 'NO_SUCH_BUCKET');
      expect(err.message).toContain("bucket 'no-such-bucket-svc' does not exist");
      expect(err.message).toContain(S3_TEST.endpoint);
    }
  });

  it('reports wrong credentials as access denied without echoing the secret', async () => {
    const store = createS3Store({ ...S3_TEST, bucket, secretAccessKey: 'wrong-secret-value' });
    for (const op of [() => store.put('k', Buffer.from('x')), () => store.get('k'), () => store.list('')]) {
      const err = await expectCode(op(), 'ACCESS_DENIED');
      expect(err.message).toMatch(/access denied \((SignatureDoesNotMatch|AccessDenied)\)/);
      expect(err.message).not.toContain('wrong-secret-value');
    }
    const unknownKey = createS3Store({ ...S3_TEST, bucket, accessKeyId: 'nobody' });
    expect((await expectCode(unknownKey.list(''), 'ACCESS_DENIED')).message).toContain('InvalidAccessKeyId');
  });

  it('reports an endpoint nobody answers on as unreachable', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const store = createS3Store({ ...S3_TEST, endpoint: `http://127.0.0.1:${port}`, bucket, maxAttempts: 1 });
    const err = await expectCode(store.list(''), 'UNREACHABLE');
    expect(err.message).toContain(`http://127.0.0.1:${port}`);
    await expectCode(store.get('k'), 'UNREACHABLE');
  });
});
