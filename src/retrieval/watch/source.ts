import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createFolderStore, createS3Store, type ObjectStore, type S3StoreOptions } from '../../platform/objects/index.ts';
import { spoolPath, type SpooledUpload } from '../upload-stream.ts';
import type { Source } from './roots.ts';

// A watched source is read through the object store port, as a folder or an S3 prefix.

export type S3Settings = Omit<S3StoreOptions, 'bucket' | 'prefix'>;

export const openSource = (source: Source, s3: S3Settings): ObjectStore =>
  source.kind === 'folder' ? createFolderStore(source.path) : createS3Store({ ...s3, bucket: source.bucket, prefix: source.prefix });

const HEAD_BYTES = 8192;

export class FileTooLargeError extends Error {
  override name = 'FileTooLargeError';
}

/**
 * A watched file copied to a temporary file, hashed as it streams, as a large upload is (whatever its size: a scan
 * reads one file at a time, off any request's path); undefined when it went away.
 */
export async function fetchObject(
  store: ObjectStore,
  key: string,
  opts: { maxBytes: number; tmpDir?: string | undefined },
): Promise<SpooledUpload | undefined> {
  // The spool's name first: between the get and the pipeline below nothing waits, so the object's stream always
  // has a reader when it fails.
  const path = await spoolPath(opts.tmpDir);
  const found = await store.get(key);
  if (!found) return undefined;
  const tooLarge = () => new FileTooLargeError(`the file is larger than the upload limit of ${opts.maxBytes} bytes (SVC_MAX_UPLOAD_BYTES)`);
  if (found.size > opts.maxBytes) {
    found.body.destroy();
    throw tooLarge();
  }
  const discard = () => rm(path, { force: true });
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let size = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (size < HEAD_BYTES) head.push(chunk.subarray(0, HEAD_BYTES - size));
      size += chunk.length;
      if (size > opts.maxBytes) return done(tooLarge());
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(found.body, count, createWriteStream(path));
  } catch (err) {
    await discard();
    throw err;
  }
  // the path under the source, so two README.md in different folders stay apart in the document list
  return { content: { path }, filename: key, declaredType: '', size, sha256: hash.digest('hex'), head: Buffer.concat(head), discard };
}
