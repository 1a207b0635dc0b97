import { createReadStream, createWriteStream, lstatSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { lstat, readdir, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ObjectStoreError } from './errors.ts';
import { checkKey, checkPrefix } from './keys.ts';
import type { ListEntry, ObjectStore, TreeEntry } from './store.ts';
import { isBytes, toReadable } from './streams.ts';

// Uploads land here first and are renamed into place, so a reader never sees half a file. Same filesystem as the
// objects, so the rename is atomic. Hidden from list and closed to keys.
const TMP = '.svc-tmp';
// A body already in memory up to this size is written without leaving the event loop (see put).
const SYNC_WRITE_MAX_BYTES = 256 * 1024;

// The embedded object store: one file per key under `root`. Differences from S3 that callers may meet: a key
// cannot be both a file and a folder ('a' and 'a/b'), which put rejects with INVALID_KEY.
export function createFolderStore(root: string): ObjectStore {
  const base = resolve(root);
  const where = `folder:${base}`;

  function pathOf(key: string): string {
    checkKey(key);
    if (key === TMP || key.startsWith(`${TMP}/`)) {
      throw new ObjectStoreError('INVALID_KEY', `object key ${JSON.stringify(key)} is reserved in ${where}`);
    }
    return join(base, key);
  }

  // Removes folders left empty by a delete, up to (not including) the root, as S3 has no empty folders.
  async function prune(from: string): Promise<void> {
    for (let dir = from; dir.startsWith(base + '/') && dir !== base; dir = dirname(dir)) {
      try {
        await rmdir(dir);
      } catch {
        return; // not empty, or gone already
      }
    }
  }

  return {
    describe: () => where,

    async put(key, body, opts = {}) {
      const target = pathOf(key);
      const tmpDir = join(base, TMP);
      const tmp = join(tmpDir, randomUUID());
      try {
        // The folder work and the rename are synchronous: each is a few microseconds of the event loop, where an
        // asynchronous call waits its turn in libuv's thread pool (milliseconds at the tail on a busy machine).
        mkdirSync(tmpDir, { recursive: true });
        try {
          mkdirSync(dirname(target), { recursive: true });
        } catch (err) {
          if (code(err) === 'EEXIST' || code(err) === 'ENOTDIR') {
            throw new ObjectStoreError('INVALID_KEY', `cannot put ${JSON.stringify(key)} in ${where}: a parent path is an object`);
          }
          throw err;
        }
        if (lstatSync(target, { throwIfNoEntry: false })?.isDirectory()) {
          throw new ObjectStoreError('INVALID_KEY', `cannot put ${JSON.stringify(key)} in ${where}: it is a folder of other objects`);
        }
        // so is the write of a small body already in memory (a dashboard page); anything else streams
        if (isBytes(body) && body.byteLength <= SYNC_WRITE_MAX_BYTES) writeFileSync(tmp, body, { flag: 'wx' });
        else if (isBytes(body)) await writeFile(tmp, body, { flag: 'wx' });
        else await pipeline(toReadable(body), createWriteStream(tmp, { flags: 'wx' }));
        const size = isBytes(body) ? body.byteLength : (await stat(tmp)).size;
        if (opts.contentLength !== undefined && size !== opts.contentLength) {
          throw new ObjectStoreError('FAILED', `put ${JSON.stringify(key)} in ${where}: expected ${opts.contentLength} bytes, got ${size}`);
        }
        try {
          renameSync(tmp, target);
        } catch (err) {
          // A concurrent delete may have pruned the freshly made folder: make it again, once.
          if (code(err) !== 'ENOENT') throw err;
          mkdirSync(dirname(target), { recursive: true });
          renameSync(tmp, target);
        }
        return { size };
      } catch (err) {
        await rm(tmp, { force: true }).catch(() => {});
        await prune(dirname(target));
        throw asStoreError(err, `put ${JSON.stringify(key)} in ${where}`);
      }
    },

    async get(key) {
      const path = pathOf(key);
      const info = await lstat(path).catch((err) => {
        if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return null;
        throw asStoreError(err, `get ${JSON.stringify(key)} from ${where}`);
      });
      // Only regular files are objects: a folder is not, and a symlink could point outside the root.
      if (!info?.isFile()) return null;
      return { body: createReadStream(path), size: info.size };
    },

    async head(key) {
      const info = await lstat(pathOf(key)).catch((err) => {
        if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return null;
        throw asStoreError(err, `head ${JSON.stringify(key)} in ${where}`);
      });
      // A put renames a new file into place, so the inode and time change with every version.
      return info?.isFile() ? { size: info.size, etag: `"${info.ino}-${info.size}-${info.mtimeMs}"` } : null;
    },

    async list(prefix) {
      const dirPrefix = checkPrefix(prefix);
      const dir = join(base, dirPrefix);
      const entries = await readdir(dir, { withFileTypes: true }).catch((err) => {
        if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return [];
        throw asStoreError(err, `list ${JSON.stringify(prefix)} in ${where}`);
      });
      const out: ListEntry[] = [];
      for (const e of entries) {
        if (dirPrefix === '' && e.name === TMP) continue;
        const key = dirPrefix + e.name;
        if (e.isDirectory()) out.push({ key, size: 0, isDir: true });
        else if (e.isFile()) {
          const info = await stat(join(dir, e.name)).catch(() => null);
          if (info) out.push({ key, size: info.size });
        }
      }
      return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },

    async listTree(prefix) {
      const out: TreeEntry[] = [];
      const walk = async (dirPrefix: string): Promise<void> => {
        const entries = await readdir(join(base, dirPrefix), { withFileTypes: true }).catch((err) => {
          if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return [];
          throw asStoreError(err, `list ${JSON.stringify(prefix)} in ${where}`);
        });
        for (const e of entries) {
          if (dirPrefix === '' && e.name === TMP) continue;
          const key = dirPrefix + e.name;
          if (e.isSymbolicLink()) out.push({ key, size: 0, version: '', link: true });
          else if (e.isDirectory()) await walk(`${key}/`);
          else if (e.isFile()) {
            const info = await lstat(join(base, key), { bigint: true }).catch(() => null);
            if (info?.isFile()) out.push({ key, size: Number(info.size), version: `${info.ino}:${info.size}:${info.mtimeNs}` });
          }
        }
      };
      await walk(checkPrefix(prefix));
      return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },

    async delete(key) {
      try {
        if (key.endsWith('/')) {
          const dirPrefix = checkPrefix(key);
          if (dirPrefix === '') throw new ObjectStoreError('INVALID_KEY', `refusing to delete the whole of ${where}`);
          const dir = pathOf(dirPrefix.slice(0, -1));
          await rm(dir, { recursive: true, force: true });
          await prune(dirname(dir));
          return;
        }
        const path = pathOf(key);
        const info = await lstat(path).catch(() => null);
        if (!info || info.isDirectory()) return; // like S3: deleting a missing object (or a folder's name) does nothing
        await unlink(path);
        await prune(dirname(path));
      } catch (err) {
        throw asStoreError(err, `delete ${JSON.stringify(key)} from ${where}`);
      }
    },
  };
}

const code = (err: unknown) => (err as NodeJS.ErrnoException)?.code;

function asStoreError(err: unknown, what: string): ObjectStoreError {
  if (err instanceof ObjectStoreError) return err;
  const c = code(err);
  const reason = err instanceof Error ? err.message : String(err);
  if (c === 'EACCES' || c === 'EPERM')
    return new ObjectStoreError('ACCESS_DENIED', `${what}: permission denied (${reason})`, { cause: err });
  return new ObjectStoreError('FAILED', `${what} failed: ${reason}`, { cause: err });
}
