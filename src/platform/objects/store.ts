import type { Readable } from 'node:stream';

export type PutBody = Uint8Array | NodeJS.ReadableStream | ReadableStream<Uint8Array>;
export type PutOptions = { contentType?: string; contentLength?: number };
export type ListEntry = { key: string; size: number; isDir?: boolean };
/**
 * An object found by listTree: `version` is opaque and changes whenever the content may have (the folder store's
 * inode, size and modification time in nanoseconds; S3's ETag, size and modification time). `link` marks a
 * symbolic link in a folder store: not an object, never followed, listed so a caller can say it was skipped.
 */
export type TreeEntry = { key: string; size: number; version: string; link?: true };

/**
 * The object store port. Keys are relative paths with '/' between segments ('runs/abc/model.pkl'); a key never
 * leaves the store's root (see keys.ts).
 *
 * list(prefix) works like `ls` on a folder: `prefix` names a folder ('' for the root; a trailing '/' is optional)
 * and the answer is its direct children, sorted by key. Files come with their size; sub-folders (any deeper key)
 * come once each as `{ key: 'a/b', size: 0, isDir: true }`, key without a trailing '/'. A prefix naming a file or
 * nothing lists nothing. MLflow's artifact browser asks exactly this question.
 */
export interface ObjectStore {
  /** Streams the body in; never holds a whole upload in memory. Replaces an existing object atomically. */
  put(key: string, body: PutBody, opts?: PutOptions): Promise<{ size: number }>;
  /** The object's bytes as a stream, or null when there is no object at the key. */
  get(key: string): Promise<{ body: Readable; size: number } | null>;
  /** The object's size and entity tag without its bytes (a poller's "has it changed?"), or null when there is none. */
  head(key: string): Promise<{ size: number; etag: string } | null>;
  list(prefix: string): Promise<ListEntry[]>;
  /** Every object under a folder ('' for the root) at any depth, sorted by key; folders themselves are not listed. */
  listTree(prefix: string): Promise<TreeEntry[]>;
  /** Deletes one key, or everything under a folder when the key ends in '/'. Missing keys are not an error. */
  delete(key: string): Promise<void>;
  /** Where the store is, for logs and messages: 'folder:/path' or 's3://bucket/prefix/'. */
  describe(): string;
}
