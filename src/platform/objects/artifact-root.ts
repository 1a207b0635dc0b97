import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { ObjectStoreError } from './errors.ts';
import { checkPrefix } from './keys.ts';
import { createFolderStore } from './folder-store.ts';
import { createS3Store, type S3StoreOptions } from './s3-store.ts';
import type { ObjectStore } from './store.ts';

export type ArtifactRoot = { kind: 'folder'; path: string } | { kind: 's3'; bucket: string; prefix: string };

// 's3://bucket/prefix/' -> bucket and prefix ('' or ending in '/'); 'file:///x' and plain paths -> an absolute
// folder. Any other scheme is refused rather than guessed at.
export function parseArtifactRoot(uri: string): ArtifactRoot {
  const s3 = /^s3:\/\/([^/]+)(?:\/(.*))?$/i.exec(uri);
  if (s3) {
    const bucket = s3[1]!;
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
      throw new ObjectStoreError('INVALID_KEY', `artifact root ${JSON.stringify(uri)}: '${bucket}' is not a valid bucket name`);
    }
    const rest = (s3[2] ?? '').replace(/\/+$/, '');
    return { kind: 's3', bucket, prefix: rest ? checkPrefix(rest) : '' };
  }
  if (/^file:/i.test(uri)) return { kind: 'folder', path: fileURLToPath(uri) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(uri)) {
    throw new ObjectStoreError('INVALID_KEY', `artifact root ${JSON.stringify(uri)}: only s3://, file:// and folder paths are supported`);
  }
  if (!uri) throw new ObjectStoreError('INVALID_KEY', 'artifact root is empty');
  return { kind: 'folder', path: resolve(uri) };
}

// The store an artifact root names; S3 connection settings come from configuration, the bucket from the root.
export function openArtifactRoot(uri: string, s3: Omit<S3StoreOptions, 'bucket' | 'prefix'> = {}): ObjectStore {
  const root = parseArtifactRoot(uri);
  return root.kind === 'folder' ? createFolderStore(root.path) : createS3Store({ ...s3, bucket: root.bucket, prefix: root.prefix });
}
