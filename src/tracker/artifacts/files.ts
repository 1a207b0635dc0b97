import { Readable } from 'node:stream';
import type { ObjectStore } from '../../platform/objects/index.ts';
import { doesNotExist, invalidParameter } from '../errors.ts';
import { inStore } from './store-errors.ts';

// The artifact proxy's operations on the store under the artifact root. Keys come checked (paths.ts).

export type FileInfo = { path: string; is_dir: boolean; file_size?: number };

/** Streams the body into the store: nothing is held whole in memory, and a failed upload leaves no object. */
export async function uploadArtifact(
  store: ObjectStore,
  key: string,
  body: ReadableStream<Uint8Array> | Uint8Array | null,
  opts: { contentLength?: number | undefined; contentType?: string | undefined },
): Promise<void> {
  if (key === '') throw invalidParameter('An artifact upload needs a file path, not the artifact root.');
  const payload = body ?? new Uint8Array(0);
  await inStore(() =>
    store.put(key, payload, {
      ...(body && opts.contentLength !== undefined ? { contentLength: opts.contentLength } : {}),
      ...(opts.contentType ? { contentType: opts.contentType } : {}),
    }),
  );
}

export async function downloadArtifact(store: ObjectStore, key: string): Promise<{ body: ReadableStream<Uint8Array>; size: number }> {
  if (key === '') throw invalidParameter('Artifact path refers to a directory, not a file: the artifact root.');
  const found = await inStore(() => store.get(key));
  if (!found) {
    // A folder is not a file: say so, as MLflow does, rather than "not found".
    const children = await inStore(() => store.list(key));
    if (children.length > 0) throw invalidParameter(`Artifact path refers to a directory, not a file: '${key}'`);
    throw doesNotExist(`Artifact '${key}' not found.`);
  }
  return { body: Readable.toWeb(found.body) as unknown as ReadableStream<Uint8Array>, size: found.size };
}

/** The direct children of a folder ('' = the root), as paths relative to that folder's parent listing: basenames. */
export async function listArtifacts(store: ObjectStore, key: string): Promise<FileInfo[]> {
  const entries = await inStore(() => store.list(key));
  return entries.map((e) => ({
    path: e.key.slice(e.key.lastIndexOf('/') + 1),
    is_dir: Boolean(e.isDir),
    ...(e.isDir ? {} : { file_size: e.size }),
  }));
}

/** Deletes a file, or a folder and everything under it. The root itself is never deleted. */
export async function deleteArtifacts(store: ObjectStore, key: string): Promise<void> {
  if (key === '') throw invalidParameter('Refusing to delete the whole artifact root.');
  await inStore(async () => {
    await store.delete(key);
    await store.delete(`${key}/`);
  });
}
