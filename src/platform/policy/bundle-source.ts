import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createS3Store, type S3StoreOptions } from '../objects/index.ts';
import { MAX_BUNDLE_BYTES } from './bundle.ts';

// Where a bundle is published: `https://` or `http://` (a conditional GET with If-None-Match), `s3://bucket/key`
// through the object store port (a HEAD for the entity tag, then the GET), or `file://` (the file's identity and
// time as its tag). Each fetch answers the new bytes with their tag, or 'unchanged' when the tag is the last one.

export type Fetched = { bytes: Uint8Array; etag: string | undefined } | 'unchanged';

export interface BundleSource {
  /** The URL, for logs and /ready; never holds a credential (the S3 keys come from settings). */
  readonly url: string;
  fetch(lastEtag: string | undefined): Promise<Fetched>;
}

export type S3Settings = Omit<S3StoreOptions, 'bucket' | 'prefix'>;

export function openBundleSource(url: string, s3: S3Settings = {}, opts: { timeoutMs?: number; fetch?: typeof fetch } = {}): BundleSource {
  const scheme = /^([a-z0-9+.-]+):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'http' || scheme === 'https') return httpSource(url, opts.timeoutMs ?? 10_000, opts.fetch ?? fetch);
  if (scheme === 'file') return fileSource(url);
  if (scheme === 's3') return s3Source(url, s3);
  throw new Error(`SVC_POLICY_BUNDLE_URL=${JSON.stringify(url)}: expected an https://, http://, s3://bucket/key or file:// URL`);
}

function httpSource(url: string, timeoutMs: number, doFetch: typeof fetch): BundleSource {
  return {
    url,
    async fetch(lastEtag) {
      const res = await doFetch(url, { headers: lastEtag ? { 'If-None-Match': lastEtag } : {}, signal: AbortSignal.timeout(timeoutMs) });
      if (res.status === 304) {
        await res.body?.cancel();
        return 'unchanged';
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(`GET ${url} answered HTTP ${res.status}`);
      }
      return { bytes: await bounded(res, url), etag: res.headers.get('etag') ?? undefined };
    },
  };
}

function fileSource(url: string): BundleSource {
  const path = fileURLToPath(url);
  return {
    url,
    async fetch(lastEtag) {
      const info = await stat(path);
      const etag = `${info.ino}-${info.size}-${info.mtimeMs}`;
      if (etag === lastEtag) return 'unchanged';
      if (info.size > MAX_BUNDLE_BYTES) throw new Error(`${path} is larger than ${MAX_BUNDLE_BYTES} bytes`);
      return { bytes: await readFile(path), etag };
    },
  };
}

function s3Source(url: string, s3: S3Settings): BundleSource {
  const m = /^s3:\/\/([^/]+)\/(.+)$/i.exec(url);
  if (!m)
    throw new Error(`SVC_POLICY_BUNDLE_URL=${JSON.stringify(url)}: an s3 URL names a bucket and a key, s3://bucket/path/bundle.tar.gz`);
  const store = createS3Store({ ...s3, bucket: m[1]!, maxAttempts: 1 });
  const key = m[2]!;
  return {
    url,
    async fetch(lastEtag) {
      const head = await store.head(key);
      if (!head) throw new Error(`${url} does not exist`);
      if (lastEtag !== undefined && head.etag === lastEtag) return 'unchanged';
      if (head.size > MAX_BUNDLE_BYTES) throw new Error(`${url} is larger than ${MAX_BUNDLE_BYTES} bytes`);
      const got = await store.get(key);
      if (!got) throw new Error(`${url} does not exist`);
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of got.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_BUNDLE_BYTES) {
          got.body.destroy();
          throw new Error(`${url} is larger than ${MAX_BUNDLE_BYTES} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      return { bytes: Buffer.concat(chunks), etag: head.etag };
    },
  };
}

/** The body, refused once it passes the bundle limit (a declared length above it is refused unread). */
async function bounded(res: Response, url: string): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > MAX_BUNDLE_BYTES) {
    await res.body?.cancel();
    throw new Error(`${url} is larger than ${MAX_BUNDLE_BYTES} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of (res.body ?? []) as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > MAX_BUNDLE_BYTES) throw new Error(`${url} is larger than ${MAX_BUNDLE_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
