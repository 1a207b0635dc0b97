import type { S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { ObjectStoreError } from './errors.ts';
import { checkKey, checkPrefix } from './keys.ts';
import { mapS3Error } from './s3-errors.ts';
import { uploadUnknownLength } from './s3-upload.ts';
import type { ListEntry, ObjectStore, TreeEntry } from './store.ts';
import { isBytes, toReadable } from './streams.ts';

export type S3StoreOptions = {
  endpoint?: string;
  region?: string;
  bucket: string;
  /** Folder inside the bucket that every key lives under ('' or 'a/b', with or without the trailing '/'). */
  prefix?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Defaults to true when an endpoint is given (MinIO and most S3-compatible servers want path-style URLs). */
  forcePathStyle?: boolean;
  maxAttempts?: number;
  connectTimeoutMs?: number;
};

const MAX_SINGLE_PUT = 5 * 1024 ** 3; // S3's limit for one PutObject

type Sdk = typeof import('@aws-sdk/client-s3');
let sdkLoading: Promise<Sdk> | undefined;
// The AWS SDK loads with a store's first request: every service imports this port, and `svc dev` keeps its objects
// in folders (3 MB less of svc dev's main heap; a bare Node process grows by 26 MB importing it).
/** The AWS SDK, loaded once for every S3 store of the process. */
export const loadS3Sdk = (): Promise<Sdk> => (sdkLoading ??= import('@aws-sdk/client-s3'));

// The object store on any S3-compatible server. A stream of known length goes in one streamed PutObject; one of
// unknown length goes part by part (s3-upload.ts), so no upload is ever held whole in memory or spooled to disk.
export function createS3Store(opts: S3StoreOptions): ObjectStore {
  const bucket = opts.bucket;
  const base = opts.prefix ? checkPrefix(opts.prefix) : '';
  const where = `s3://${bucket}/${base}`;
  const endpoint = opts.endpoint ?? `AWS S3 (${opts.region ?? 'us-east-1'})`;
  const settings = {
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    region: opts.region ?? 'us-east-1',
    forcePathStyle: opts.forcePathStyle ?? Boolean(opts.endpoint),
    ...(opts.accessKeyId ? { credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey ?? '' } } : {}),
    // Only where S3 requires them: the SDK's default trailing checksums are not understood by every S3-compatible
    // server, and a streamed body of known length then goes out as-is.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: opts.maxAttempts ?? 3,
    requestHandler: { connectionTimeout: opts.connectTimeoutMs ?? 5_000 },
  } as const;
  let connected: Promise<{ sdk: Sdk; client: S3Client }> | undefined;
  const connect = () => (connected ??= loadS3Sdk().then((sdk) => ({ sdk, client: new sdk.S3Client(settings) })));
  const fail = (what: string) => (err: unknown) => {
    throw mapS3Error(err, { what, where, endpoint, bucket });
  };

  async function listAll(prefix: string, delimiter?: string) {
    const files: { Key: string; Size: number; ETag: string; LastModified: string }[] = [];
    const dirs: string[] = [];
    let token: string | undefined;
    const { sdk, client } = await connect();
    do {
      const page = await client.send(
        new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: delimiter, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) {
        if (o.Key) files.push({ Key: o.Key, Size: o.Size ?? 0, ETag: o.ETag ?? '', LastModified: o.LastModified?.toISOString() ?? '' });
      }
      for (const p of page.CommonPrefixes ?? []) if (p.Prefix) dirs.push(p.Prefix);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return { files, dirs };
  }

  return {
    describe: () => where,

    async put(key, body, o = {}) {
      const Key = base + checkKey(key);
      const what = `put ${JSON.stringify(key)}`;
      const ContentType = o.contentType;
      const { sdk, client } = await connect().catch(fail(what));
      if (isBytes(body)) {
        await client
          .send(new sdk.PutObjectCommand({ Bucket: bucket, Key, Body: body, ContentLength: body.byteLength, ContentType }))
          .catch(fail(what));
        return { size: body.byteLength };
      }
      const stream = toReadable(body);
      if (o.contentLength !== undefined && o.contentLength <= MAX_SINGLE_PUT) {
        await client
          .send(new sdk.PutObjectCommand({ Bucket: bucket, Key, Body: stream, ContentLength: o.contentLength, ContentType }))
          .catch(fail(what));
        return { size: o.contentLength };
      }
      return uploadUnknownLength({ sdk, client, bucket, key: Key, contentType: ContentType }, stream).catch(fail(what));
    },

    async get(key) {
      const Key = base + checkKey(key);
      try {
        const { sdk, client } = await connect();
        const res = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key }));
        const body = res.Body as Readable;
        // as the folder store's: a failure reaches whoever reads the body, and never a body nobody reads yet
        body.on('error', () => {});
        return { body, size: res.ContentLength ?? 0 };
      } catch (err) {
        const mapped = mapS3Error(err, { what: `get ${JSON.stringify(key)}`, where, endpoint, bucket });
        if (mapped.code === 'NOT_FOUND') return null;
        throw mapped;
      }
    },

    async head(key) {
      const Key = base + checkKey(key);
      try {
        const { sdk, client } = await connect();
        const res = await client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key }));
        return { size: res.ContentLength ?? 0, etag: res.ETag ?? '' };
      } catch (err) {
        // A HEAD answer has no body, so a missing key is a bare 404 named NotFound rather than NoSuchKey.
        if (
          (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404 &&
          (err as Error).name !== 'NoSuchBucket'
        )
          return null;
        const mapped = mapS3Error(err, { what: `head ${JSON.stringify(key)}`, where, endpoint, bucket });
        if (mapped.code === 'NOT_FOUND') return null;
        throw mapped;
      }
    },

    async list(prefix) {
      const dir = base + checkPrefix(prefix);
      const { files, dirs } = await listAll(dir, '/').catch(fail(`list ${JSON.stringify(prefix)}`));
      const strip = (k: string) => k.slice(base.length);
      const out: ListEntry[] = [
        // A key equal to the folder itself is a "folder marker" some tools write: not a child.
        ...files.filter((f) => f.Key !== dir).map((f) => ({ key: strip(f.Key), size: f.Size })),
        ...dirs.map((d) => ({ key: strip(d).slice(0, -1), size: 0, isDir: true })),
      ];
      return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },

    async listTree(prefix) {
      const dir = base + checkPrefix(prefix);
      const { files } = await listAll(dir).catch(fail(`list ${JSON.stringify(prefix)}`));
      const out: TreeEntry[] = files
        // a key ending in '/' is a "folder marker" some tools write, not an object
        .filter((f) => !f.Key.endsWith('/'))
        .map((f) => ({ key: f.Key.slice(base.length), size: f.Size, version: `${f.ETag}:${f.Size}:${f.LastModified}` }));
      return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },

    async delete(key) {
      const { sdk, client } = await connect().catch(fail(`delete ${JSON.stringify(key)}`));
      if (!key.endsWith('/')) {
        await client
          .send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: base + checkKey(key) }))
          .catch(fail(`delete ${JSON.stringify(key)}`));
        return;
      }
      const dir = checkPrefix(key);
      if (dir === '') throw new ObjectStoreError('INVALID_KEY', `refusing to delete the whole of ${where}`);
      const what = `delete ${JSON.stringify(key)}`;
      const { files } = await listAll(base + dir).catch(fail(what));
      for (let i = 0; i < files.length; i += 1000) {
        const Objects = files.slice(i, i + 1000).map((f) => ({ Key: f.Key }));
        const res = await client.send(new sdk.DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects, Quiet: true } })).catch(fail(what));
        const first = res.Errors?.[0];
        if (first)
          throw new ObjectStoreError(
            'FAILED',
            `${what} in ${where}: ${res.Errors!.length} objects not deleted, first ${first.Key}: ${first.Code} ${first.Message}`,
          );
      }
    },
  };
}
