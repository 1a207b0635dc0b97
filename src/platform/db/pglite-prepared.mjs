// A new PGlite cluster (in memory, or in a data folder that holds none yet) starts from a tarball of the same cluster
// prepared before, where one is cached: initdb (and a sample's load) is seconds of wasm (7 s on a busy two-core
// machine), unpacking the files it left is a fraction of that (1.4 s). A folder that holds a cluster opens as it is. The tarball
// is keyed by PGlite's version and what the caller prepares, and kept under the svc cache folder ($SVC_CACHE, else
// ~/.cache/svc), the user's own, so no other local user can plant a cluster. A cache that cannot be read or written
// only costs the slower start. Plain JavaScript: the database workers import it.
import { createHash } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { untarInto } from './untar.mjs';

const require = createRequire(import.meta.url);
const PGLITE_VERSION = JSON.parse(
  await readFile(join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8'),
).version;
const FOLDER = join(process.env.SVC_CACHE || join(homedir(), '.cache', 'svc'), 'pglite');

// Every embedded cluster runs with 16 MB of shared buffers, not initdb's 128 MB: PGlite allocates them in its wasm
// memory, which never shrinks, and most of them were touched (about 90 MB of resident set per database). The
// embedded databases are small; a page that is not in the buffers is one read away in the data folder.
const SHARED_BUFFERS = ['-c', 'shared_buffers=16MB'];

/**
 * PGlite.create(options) with `prepare(db)` applied to a new cluster: from the cached tarball when there is one, else
 * prepared now and cached for the next start. `key` names everything `prepare` does (its scripts), so a change to
 * them is a new tarball. With `options.dataDir`, a folder that already holds a cluster opens as it is.
 */
export async function createPrepared(PGlite, given, { key, prepare = async () => {} }) {
  const options = { startParams: [...PGlite.defaultStartParams, ...SHARED_BUFFERS], ...given };
  const folder = options.dataDir;
  if (folder && (await holdsCluster(folder))) return PGlite.create(options);
  const wasEmpty = folder ? (await readdir(folder).catch(() => [])).length === 0 : true;
  const file = join(FOLDER, `${createHash('sha256').update(`${PGLITE_VERSION}\n${key}`).digest('hex').slice(0, 24)}.tar`);
  // into a folder, the tarball is unpacked a piece at a time; into memory, PGlite reads it whole
  if (folder && wasEmpty && (await exists(file))) {
    try {
      await untarInto(file, folder);
      return await PGlite.create(options);
    } catch {
      await rm(file, { force: true }).catch(() => {});
      await emptyFolder(folder);
    }
  }
  const saved = await readFile(file).catch(() => undefined);
  if (saved) {
    try {
      return await PGlite.create({ ...options, loadDataDir: new Blob([saved]) });
    } catch {
      await rm(file, { force: true }).catch(() => {});
      // what a failed unpacking left in a folder that was empty goes, so initdb starts clean
      if (folder && wasEmpty) await emptyFolder(folder);
    }
  }
  const db = await PGlite.create(options);
  await prepare(db);
  await save(db, file).catch(() => {});
  return db;
}

const exists = (path) =>
  access(path).then(
    () => true,
    () => false,
  );
const holdsCluster = (folder) => exists(join(folder, 'PG_VERSION'));

async function emptyFolder(folder) {
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
}

async function save(db, file) {
  const dump = await db.dumpDataDir('none');
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  // another process may be writing the same tarball: each writes its own and the rename is atomic
  const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await writeFile(partial, new Uint8Array(await dump.arrayBuffer()), { mode: 0o600 });
  await rename(partial, file);
}
