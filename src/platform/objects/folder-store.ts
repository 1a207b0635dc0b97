import { createReadStream, createWriteStream, lstatSync, renameSync, writeFileSync } from 'node:fs';
import { lstat, readdir, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ObjectStoreError } from './errors.ts';
import { code, folderPaths, type Walk } from './folder-paths.ts';
import { checkKey, checkPrefix } from './keys.ts';
import type { ListEntry, ObjectStore, TreeEntry } from './store.ts';
import { isBytes, toReadable } from './streams.ts';

// Uploads land here first and are renamed into place, so a reader never sees half a file. Same filesystem as the
// objects, so the rename is atomic. Hidden from list and closed to keys.
const TMP = '.svc-tmp';
// A body already in memory up to this size is written without leaving the event loop (see put).
const SYNC_WRITE_MAX_BYTES = 256 * 1024;

// The embedded object store: one file per key under `root`. Differences from S3 that callers may meet: a key
// cannot be both a file and a folder ('a' and 'a/b'), which put rejects with INVALID_KEY; a key with a symbolic
// link anywhere on its way is refused with INVALID_KEY (folder-paths.ts), whatever the operation.
export function createFolderStore(root: string): ObjectStore {
  const base = resolve(root);
  const where = `folder:${base}`;
  const paths = folderPaths(base, where);

  // A key's path components, once the key is known to be one and not the upload folder's.
  function segmentsOf(key: string): string[] {
    checkKey(key);
    const segments = key.split('/');
    if (segments[0] === TMP) {
      throw new ObjectStoreError('INVALID_KEY', `object key ${JSON.stringify(key)} is reserved in ${where}`);
    }
    return segments;
  }
  // A folder prefix's components ([] for the root).
  const folderSegments = (prefix: string): string[] => {
    const dirPrefix = checkPrefix(prefix);
    return dirPrefix === '' ? [] : segmentsOf(dirPrefix.slice(0, -1));
  };

  // Removes folders left empty by a delete, up to (not including) the root, as S3 has no empty folders.
  async function prune(from: string): Promise<void> {
    const top = paths.root();
    if (top === null) return;
    for (let dir = from; dir.startsWith(top + '/') && dir !== top; dir = dirname(dir)) {
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
      const segments = segmentsOf(key);
      const name = segments.pop()!;
      let tmp: string | undefined;
      let parent: string | undefined;
      try {
        // The folder work and the rename are synchronous: each is a few microseconds of the event loop, where an
        // asynchronous call waits its turn in libuv's thread pool (milliseconds at the tail on a busy machine).
        tmp = join(paths.ensureFolder([TMP], `${TMP}/`), randomUUID());
        parent = paths.ensureFolder(segments, key);
        const target = join(parent, name);
        const existing = lstatSync(target, { throwIfNoEntry: false });
        if (existing?.isSymbolicLink()) throw paths.refused(key, key);
        if (existing?.isDirectory()) {
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
          // A concurrent delete may have pruned the freshly made folder: make it again (checked again), once.
          if (code(err) !== 'ENOENT') throw err;
          parent = paths.ensureFolder(segments, key);
          renameSync(tmp, join(parent, name));
        }
        return { size };
      } catch (err) {
        if (tmp) await rm(tmp, { force: true }).catch(() => {});
        if (parent) await prune(parent);
        throw asStoreError(err, `put ${JSON.stringify(key)} in ${where}`);
      }
    },

    async get(key) {
      const segments = segmentsOf(key);
      let opened;
      try {
        opened = paths.openChecked(segments, key);
      } catch (err) {
        throw asStoreError(err, `get ${JSON.stringify(key)} from ${where}`);
      }
      if (!opened) return null;
      // The file is open already, so removing or moving it now changes nothing for this reader. A read failure
      // after that still reaches whoever consumes the stream (pipeline, for await); this listener only keeps a
      // stream nobody listens to yet from taking the process down with it.
      const body = createReadStream(opened.path, { fd: opened.fd });
      body.on('error', () => {});
      return { body, size: opened.size };
    },

    async head(key) {
      const segments = segmentsOf(key);
      let found;
      try {
        found = paths.walk(segments);
      } catch (err) {
        throw asStoreError(err, `head ${JSON.stringify(key)} in ${where}`);
      }
      if (found.kind === 'link') throw paths.refused(key, found.at);
      if (found.kind === 'missing' || !found.stat.isFile()) return null;
      // A put renames a new file into place, so the inode and time change with every version.
      const info = found.stat;
      return { size: info.size, etag: `"${info.ino}-${info.size}-${info.mtimeMs}"` };
    },

    async list(prefix) {
      const segments = folderSegments(prefix);
      const keyPrefix = segments.length ? `${segments.join('/')}/` : '';
      const dir = folderAt(segments, prefix);
      if (dir === null) return [];
      const entries = await readdir(dir, { withFileTypes: true }).catch((err) => {
        if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return [];
        throw asStoreError(err, `list ${JSON.stringify(prefix)} in ${where}`);
      });
      const out: ListEntry[] = [];
      for (const e of entries) {
        if (keyPrefix === '' && e.name === TMP) continue;
        const key = keyPrefix + e.name;
        if (e.isDirectory()) out.push({ key, size: 0, isDir: true });
        else if (e.isFile()) {
          // lstat: a file swapped for a link since the folder was read is not measured through the link
          const info = await lstat(join(dir, e.name)).catch(() => null);
          if (info?.isFile()) out.push({ key, size: info.size });
        }
      }
      return out.sort(byKey);
    },

    async listTree(prefix) {
      const out: TreeEntry[] = [];
      // Each folder is looked up again from the root before it is read, so one swapped for a link while the tree
      // is walked is listed as a link, not read through.
      const walk = async (segments: string[]): Promise<void> => {
        const found = resolved(() => paths.walk(segments), prefix);
        if (found.kind === 'link') return void out.push({ key: segments.join('/'), size: 0, version: '', link: true });
        if (found.kind === 'missing' || !found.stat.isDirectory()) return;
        const entries = await readdir(found.path, { withFileTypes: true }).catch((err) => {
          if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return [];
          throw asStoreError(err, `list ${JSON.stringify(prefix)} in ${where}`);
        });
        for (const e of entries) {
          if (segments.length === 0 && e.name === TMP) continue;
          const key = [...segments, e.name].join('/');
          if (e.isSymbolicLink()) out.push({ key, size: 0, version: '', link: true });
          else if (e.isDirectory()) await walk([...segments, e.name]);
          else if (e.isFile()) {
            const info = await lstat(join(found.path, e.name), { bigint: true }).catch(() => null);
            if (info?.isFile()) out.push({ key, size: Number(info.size), version: `${info.ino}:${info.size}:${info.mtimeNs}` });
          }
        }
      };
      const segments = folderSegments(prefix);
      // a prefix that is itself a link, or passes through one, is refused rather than listed as one
      if (folderAt(segments, prefix) === null) return [];
      await walk(segments);
      return out.sort(byKey);
    },

    async delete(key) {
      try {
        if (key.endsWith('/')) {
          const segments = folderSegments(key);
          if (segments.length === 0) throw new ObjectStoreError('INVALID_KEY', `refusing to delete the whole of ${where}`);
          const dir = folderAt(segments, key);
          if (dir === null) return;
          // rm does not follow links it meets inside the folder: it removes the link itself
          await rm(dir, { recursive: true, force: true });
          await prune(dirname(dir));
          return;
        }
        const found = paths.walk(segmentsOf(key));
        if (found.kind === 'link') throw paths.refused(key, found.at);
        if (found.kind === 'missing' || found.stat.isDirectory()) return; // like S3: deleting a missing object (or a folder's name) does nothing
        await unlink(found.path);
        await prune(dirname(found.path));
      } catch (err) {
        throw asStoreError(err, `delete ${JSON.stringify(key)} from ${where}`);
      }
    },
  };

  // The folder a prefix names, or null when there is none (missing, or an object); refuses a link on the way.
  function folderAt(segments: string[], prefix: string): string | null {
    const found = resolved(() => paths.walk(segments), prefix);
    if (found.kind === 'link') throw paths.refused(prefix.replace(/\/+$/, ''), found.at);
    return found.kind === 'found' && found.stat.isDirectory() ? found.path : null;
  }

  function resolved(walk: () => Walk, prefix: string): Walk {
    try {
      return walk();
    } catch (err) {
      throw asStoreError(err, `list ${JSON.stringify(prefix)} in ${where}`);
    }
  }
}

const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

function asStoreError(err: unknown, what: string): ObjectStoreError {
  if (err instanceof ObjectStoreError) return err;
  const c = code(err);
  const reason = err instanceof Error ? err.message : String(err);
  if (c === 'EACCES' || c === 'EPERM')
    return new ObjectStoreError('ACCESS_DENIED', `${what}: permission denied (${reason})`, { cause: err });
  return new ObjectStoreError('FAILED', `${what} failed: ${reason}`, { cause: err });
}
