import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, realpathSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { ObjectStoreError } from './errors.ts';

// The one way a folder store turns a key into a path on disk. Every component is looked up under the root's real
// path (taken once) and none may be a symbolic link, the last one included: a link planted inside the root (by
// whoever can write the folder, or a watched folder's owner) would otherwise carry a read, write, listing or delete
// anywhere the service's user can reach.
//
// How: an lstat of each component, not an open with O_NOFOLLOW per component. Node has no openat(), so an
// O_NOFOLLOW open of a whole path only guards its last component; the lstat walk checks them all. The walk is
// synchronous, like the store's folder work in put: a few microseconds of the event loop each, where an
// asynchronous call waits its turn in libuv's thread pool. What the walk cannot close on its own is the window
// between the check and the call that follows it; a read closes it (openChecked: O_NOFOLLOW, then the opened file
// must be the inode the walk found). Writes, listings and deletions keep a window of microseconds, which only
// someone who can already write inside the root can aim at, and then only by swapping a folder for a link at that
// instant.

export type Walk =
  | { kind: 'found'; path: string; stat: Stats }
  /** Some component is absent, or a non-folder stands where a folder is needed. */
  | { kind: 'missing' }
  /** A symbolic link at `at` (the key's components up to and including the link). */
  | { kind: 'link'; at: string };

export type FolderPaths = {
  /** The root's real path; null while the root does not exist (nothing is stored yet). */
  root(): string | null;
  /** As root(), creating the root first when it is missing. */
  ensureRoot(): string;
  /** Looks `segments` up under the root, component by component, never through a link. */
  walk(segments: readonly string[]): Walk;
  /** As walk for a folder, creating each missing component; refuses a link or an object on the way. */
  ensureFolder(segments: readonly string[], key: string): string;
  /** The regular file at `segments`, opened for reading; null when there is none; refuses a link on the way. */
  openChecked(segments: readonly string[], key: string): { fd: number; path: string; size: number } | null;
  /** The refusal for a link met on the way to `key`. */
  refused(key: string, at: string): ObjectStoreError;
};

// O_NONBLOCK: a file swapped for a FIFO after the walk must not hold a thread-pool thread until a writer comes.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
// A read retries when the object was replaced (a put renames a new file in) between the walk and the open.
const OPEN_ATTEMPTS = 3;

export function folderPaths(base: string, where: string): FolderPaths {
  let real: string | undefined;

  function root(): string | null {
    if (real !== undefined) return real;
    try {
      real = realpathSync(base);
      return real;
    } catch (err) {
      if (code(err) === 'ENOENT') return null;
      throw err;
    }
  }

  function ensureRoot(): string {
    // The root itself is the operator's setting: a link there is theirs to make, so it is followed (once). Made
    // again if it was removed while the store was in use, as put always did.
    mkdirSync(real ?? base, { recursive: true });
    return root()!;
  }

  function walk(segments: readonly string[]): Walk {
    let path = root();
    if (path === null) return { kind: 'missing' };
    let stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat) return { kind: 'missing' };
    for (let i = 0; i < segments.length; i++) {
      if (!stat.isDirectory()) return { kind: 'missing' };
      path = join(path, segments[i]!);
      const next = lstatSync(path, { throwIfNoEntry: false });
      if (!next) return { kind: 'missing' };
      if (next.isSymbolicLink()) return { kind: 'link', at: segments.slice(0, i + 1).join('/') };
      stat = next;
    }
    return { kind: 'found', path, stat };
  }

  function refused(key: string, at: string): ObjectStoreError {
    const which = at === key ? 'is a symbolic link' : `passes through a symbolic link (${JSON.stringify(at)})`;
    return new ObjectStoreError('INVALID_KEY', `object key ${JSON.stringify(key)} ${which} in ${where}; links are never followed`);
  }

  function ensureFolder(segments: readonly string[], key: string): string {
    let path = ensureRoot();
    for (let i = 0; i < segments.length; i++) {
      path = join(path, segments[i]!);
      let stat = lstatSync(path, { throwIfNoEntry: false });
      if (!stat) {
        try {
          mkdirSync(path);
        } catch (err) {
          if (code(err) !== 'EEXIST') throw err; // made by a concurrent put: look at what is there now
        }
        stat = lstatSync(path);
      }
      if (stat.isSymbolicLink()) throw refused(key, segments.slice(0, i + 1).join('/'));
      if (!stat.isDirectory()) {
        throw new ObjectStoreError('INVALID_KEY', `cannot put ${JSON.stringify(key)} in ${where}: a parent path is an object`);
      }
    }
    return path;
  }

  function openChecked(segments: readonly string[], key: string): { fd: number; path: string; size: number } | null {
    for (let attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
      const found = walk(segments);
      if (found.kind === 'link') throw refused(key, found.at);
      if (found.kind === 'missing' || !found.stat.isFile()) return null;
      let fd: number;
      try {
        fd = openSync(found.path, READ_FLAGS);
      } catch (err) {
        if (code(err) === 'ELOOP') throw refused(key, key); // became a link since the walk
        if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return null; // removed or moved since the listing
        throw err;
      }
      // The walk saw this inode at the key with no link on the way; a folder swapped for a link since would have
      // opened another one.
      const opened = fstatSync(fd);
      if (opened.isFile() && opened.ino === found.stat.ino && opened.dev === found.stat.dev) {
        return { fd, path: found.path, size: opened.size };
      }
      closeSync(fd);
    }
    throw new ObjectStoreError('FAILED', `get ${JSON.stringify(key)} from ${where}: the object kept changing while it was opened`);
  }

  return { root, ensureRoot, walk, ensureFolder, openChecked, refused };
}

export const code = (err: unknown) => (err as NodeJS.ErrnoException)?.code;
