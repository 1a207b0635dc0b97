import type { Sql } from '../../platform/db/index.ts';
import { ObjectStoreError, type ObjectStore, type TreeEntry } from '../../platform/objects/index.ts';
import type { RetrievalDeps } from '../deps.ts';
import { ingestSpooled } from '../documents.ts';
import { retrievalProblem } from '../errors.ts';
import { backendOf } from '../backends/index.ts';
import { bumpCollectionVersion, collectionHead } from '../store.ts';
import { resolveWatchUri, WatchUriError, type WatchRoots } from './roots.ts';
import { FileTooLargeError, fetchObject, openSource, type S3Settings } from './source.ts';
import * as watches from './store.ts';

// One scan of one watched source by the replica holding its lease. Every file's outcome is committed as it is
// decided (a new or changed file together with its document), so a scan that stops anywhere is picked up by the
// next without reading again what was done: a file whose listing version is the one recorded is not read at all.

export type WatchSettings = { roots: WatchRoots; s3: S3Settings; leaseSeconds: number; concurrency: number };
export type ScanControl = {
  owner: string;
  settings: WatchSettings;
  shouldStop(): boolean;
  /** How a source is opened (openSource, unless a test wraps the store to stage a race). */
  open?: typeof openSource | undefined;
};

/** The lease went to someone else, or the replica is stopping: leave the rest to the next holder. */
export class ScanInterrupted extends Error {
  override name = 'ScanInterrupted';
}

const MAX_BACKOFF_SECONDS = 86_400;
/** The watch's documents say where they came from. */
export const watchPrincipal = (uri: string) => `watch:${uri}`;

export async function scanWatch(deps: RetrievalDeps, watch: watches.WatchRow, control: ScanControl): Promise<watches.ScanCounts> {
  const slug = watch.collection_slug;
  const counts: watches.ScanCounts = { seen: 0, ingested: 0, updated: 0, deleted: 0, failed: 0 };
  // the root may have changed, or the folder become a link, since the watch was set
  const source = await resolveWatchUri(watch.uri, control.settings.roots);
  const objects = (control.open ?? openSource)(source, control.settings.s3);
  const listing = await objects.listTree('');
  const known = new Map((await watches.listFiles(deps.db, slug)).filter((f) => f.uri === watch.uri).map((f) => [f.path, f]));
  const listed = new Set(listing.map((entry) => entry.key));

  // A few files at a time (SVC_WATCH_CONCURRENCY): each commits on its own, so while one waits on the database or
  // the embedder another is read. Once one fails or the scan must stop, no lane starts another file, and the scan
  // ends only when the files under way have (a scan never leaves work running behind it).
  let next = 0;
  let stopped: unknown;
  const lane = async () => {
    for (let i = next++; i < listing.length && stopped === undefined; i = next++) {
      const entry = listing[i]!;
      if (control.shouldStop()) {
        stopped = new ScanInterrupted(`scan of ${watch.uri} interrupted`);
        break;
      }
      try {
        counts.seen++;
        const outcome = await scanFile(deps, watch, objects, entry, known.get(entry.key));
        deps.metrics.watchFiles.inc({ outcome });
        if (outcome === 'ingested') counts.ingested++;
        else if (outcome === 'updated') counts.updated++;
        else if (outcome === 'failed' || outcome === 'skipped' || outcome === 'waiting' || outcome === 'vanished') counts.failed++;
      } catch (err) {
        stopped ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(control.settings.concurrency, listing.length) }, lane));
  if (stopped !== undefined) throw stopped;

  // files gone from the source, and everything remembered from a source the watch no longer follows
  for (const file of await watches.listFiles(deps.db, slug)) {
    if (file.uri === watch.uri && listed.has(file.path)) continue;
    if (control.shouldStop()) throw new ScanInterrupted(`scan of ${watch.uri} interrupted`);
    const removed = await deps.db.transaction(async (tx) => {
      const released = file.document_id && file.owned ? await release(deps, tx, slug, file.document_id, file) : false;
      await watches.deleteFile(tx, slug, file.uri, file.path);
      if (released) await bumpCollectionVersion(tx, slug);
      return released;
    });
    if (removed) {
      counts.deleted++;
      deps.metrics.watchFiles.inc({ outcome: 'deleted' });
    }
  }
  return counts;
}

type Outcome = 'unchanged' | 'ingested' | 'updated' | 'failed' | 'waiting' | 'skipped' | 'vanished';

async function scanFile(
  deps: RetrievalDeps,
  watch: watches.WatchRow,
  objects: ObjectStore,
  entry: TreeEntry,
  held: watches.FileRow | undefined,
): Promise<Outcome> {
  const slug = watch.collection_slug;
  const at = { collection_slug: slug, uri: watch.uri, path: entry.key };
  if (entry.link) {
    if (held?.status === 'skipped') return 'skipped';
    await letGo(deps, held, {
      ...at,
      version: '',
      sha256: null,
      document_id: null,
      owned: false,
      status: 'skipped',
      attempts: 0,
      retry_in_seconds: null,
      reason: 'a symbolic link: not followed, since it could lead out of SVC_WATCH_ROOTS. Copy the file into the watched folder instead.',
    });
    return 'skipped';
  }
  if (held && held.version === entry.version) {
    if (held.status === 'indexed') return 'unchanged';
    if (held.status === 'failed' && held.retry_at && held.retry_at.getTime() > Date.now()) return 'waiting';
  }

  const failed = async (reason: string, outcome: Outcome = 'failed'): Promise<Outcome> => {
    // an unchanged file that fails again waits twice as long; a file changed since starts its count again
    const attempts = held?.status === 'failed' && held.version === entry.version ? held.attempts + 1 : 1;
    await watches.upsertFile(deps.db, {
      ...at,
      version: entry.version,
      // the document of its last good content stays until the file is fixed or removed
      sha256: held?.sha256 ?? null,
      document_id: held?.document_id ?? null,
      owned: held?.owned ?? false,
      status: 'failed',
      reason,
      attempts,
      // a file that went away is looked at again by the next scan (gone for good, it is let go then)
      retry_in_seconds: outcome === 'vanished' ? null : Math.min(MAX_BACKOFF_SECONDS, watch.interval_seconds * 2 ** attempts),
    });
    return outcome;
  };

  let upload;
  try {
    upload = await fetchObject(objects, entry.key, { maxBytes: deps.config.MAX_UPLOAD_BYTES, tmpDir: deps.config.UPLOAD_TMP_DIR });
  } catch (err) {
    if (err instanceof FileTooLargeError || err instanceof ObjectStoreError) return failed(err.message);
    throw err;
  }
  // Removed or moved between the listing and the read (a folder renamed mid-scan): one file's failure, recorded.
  if (!upload) return failed('the file was removed or moved after the folder was listed; the next scan looks again.', 'vanished');

  const indexed = {
    ...at,
    version: entry.version,
    sha256: upload.sha256,
    status: 'indexed' as const,
    reason: null,
    attempts: 0,
    retry_in_seconds: null,
  };
  if (held?.status !== 'skipped' && held?.document_id && held.sha256 === upload.sha256) {
    // touched, not changed
    await upload.discard();
    await watches.upsertFile(deps.db, { ...indexed, document_id: held.document_id, owned: held.owned });
    return 'unchanged';
  }
  const replaces = held?.document_id && held.owned ? held.document_id : undefined;
  const principal = watchPrincipal(watch.uri);
  try {
    const result = await ingestSpooled(deps, slug, upload, { user: principal }, async (tx, document) => {
      // the new document and the end of the old one commit together: a query sees one or the other
      if (replaces) await release(deps, tx, slug, replaces, at);
      await watches.upsertFile(tx, { ...indexed, document_id: document.id, owned: true });
    });
    if (!result.created) {
      // the collection already holds these bytes (a hand upload, another watched file): point at that document
      const document = result.document;
      await deps.db.transaction(async (tx) => {
        if (replaces && replaces !== document.document_id && (await release(deps, tx, slug, replaces, at))) {
          await bumpCollectionVersion(tx, slug);
        }
        const owned = document.uploaded_by === principal || replaces === document.document_id;
        await watches.upsertFile(tx, { ...indexed, document_id: document.document_id, owned });
      });
    }
    return held?.document_id ? 'updated' : 'ingested';
  } catch (err) {
    const problem = retrievalProblem(err);
    if (problem) return failed(problem.detail);
    deps.logger.error({ err, event: 'retrieval.watch_file_failed', collection: slug, path: entry.key }, 'watched file failed');
    return failed('internal error while ingesting the file; the service log has the details.');
  }
}

/** Records a file that is no longer one the watch can read (a link), letting its document go. */
async function letGo(deps: RetrievalDeps, held: watches.FileRow | undefined, row: Parameters<typeof watches.upsertFile>[1]): Promise<void> {
  await deps.db.transaction(async (tx: Sql) => {
    if (held?.document_id && held.owned && (await release(deps, tx, row.collection_slug, held.document_id, row))) {
      await bumpCollectionVersion(tx, row.collection_slug);
    }
    await watches.upsertFile(tx, row);
  });
}

/** Lets a document go (watches.releaseDocument); its chunks on the lake or in OpenSearch go in the same transaction. */
async function release(
  deps: RetrievalDeps,
  tx: Sql,
  slug: string,
  documentId: string,
  except: { uri: string; path: string },
): Promise<boolean> {
  const released = await watches.releaseDocument(tx, slug, documentId, except);
  if (released) {
    const head = await collectionHead(tx, slug);
    if (head) await backendOf(deps, head).removeChunks(tx, documentId);
  }
  return released;
}

/** A scan that could not start or list its source; recorded on the watch, retried next interval. */
export function scanErrorMessage(err: unknown): string | undefined {
  if (err instanceof WatchUriError || err instanceof ObjectStoreError) return err.message;
  return undefined;
}
