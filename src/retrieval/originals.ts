import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { notFound } from '../platform/errors.ts';
import type { Sql } from '../platform/db/index.ts';
import type { Caller } from '../platform/identity.ts';
import { requireQueryable } from './access.ts';
import type { RetrievalDeps } from './deps.ts';
import type { DocumentContent } from './ingest/index.ts';
import * as store from './store.ts';

// The uploaded file itself, kept in the object store (deps.originals) as `<slug>/<document id>`, so that a cited PDF
// page can be shown as it looks. It is written once the document has committed, and the document's row records its
// size (`original_bytes`) from the start, so keeping it costs no statement of its own: an upload that fails before
// the commit stores nothing, and one whose file could not be stored keeps its document without an original (the
// record taken back). Until the upload answers, its original may be read as not held yet; a file written for a
// document deleted meanwhile (its collection gone) is left to the sweep. Whoever may query the collection may read it.
// SVC_ORIGINALS_RETENTION_DAYS > 0 removes originals that much older than their upload (sweepOriginals); the
// sweep also removes objects whose document is gone (a watch let it go, a delete whose object removal failed).

export const originalKey = (document: { id: string; collection_slug: string }) => `${document.collection_slug}/${document.id}`;

/**
 * Stores the upload's bytes as the committed document's original, whose row already records their size; if they
 * cannot be stored, the record is taken back. Never throws: logged.
 */
export async function keepOriginal(
  deps: RetrievalDeps,
  document: { id: string; collection_slug: string; content_type: string },
  upload: { content: DocumentContent; size: number },
): Promise<void> {
  const key = originalKey(document);
  try {
    const body = 'bytes' in upload.content ? upload.content.bytes : createReadStream(upload.content.path);
    await deps.originals.put(key, body, { contentType: document.content_type, contentLength: upload.size });
  } catch (err) {
    deps.logger.error({ err, event: 'retrieval.original_not_kept', document: document.id }, 'the uploaded file could not be kept');
    await deps.originals.delete(key).catch(() => {});
    await deps.db
      .query(`UPDATE retrieval_documents SET original_bytes = NULL WHERE id = $1::uuid`, [document.id])
      .catch((error: unknown) =>
        deps.logger.error(
          { err: error, event: 'retrieval.original_record_kept', document: document.id },
          'the document still records an original that was not kept: reading it answers that the store does not hold it',
        ),
      );
  }
}

/** Removes a document's original (for whoever deletes the document; after its row is gone). */
export async function deleteOriginal(deps: RetrievalDeps, document: { id: string; collection_slug: string }): Promise<void> {
  await deps.originals.delete(originalKey(document));
}

/** Removes every original of a collection (after its rows are gone); a failure is logged, the sweep retries. */
export async function deleteCollectionOriginals(deps: RetrievalDeps, slug: string): Promise<void> {
  await deps.originals.delete(`${slug}/`).catch((err: unknown) => {
    deps.logger.warn(
      { err, event: 'retrieval.originals_not_deleted', collection: slug },
      'originals of a deleted collection stay for the sweep',
    );
  });
}

export type Original = { body: Readable; size: number; content_type: string; filename: string };

export async function readOriginal(deps: RetrievalDeps, caller: Caller, slug: string, documentId: string): Promise<Original> {
  // as a direct query: a collection that exists but does not admit the caller is 403, with the query's one message
  const collection = await store.collectionHead(deps.db, slug);
  if (!collection) throw notFound(`Collection '${slug}' does not exist.`);
  await requireQueryable(deps, caller, collection);
  const doc = await documentOf(deps.db, slug, documentId);
  if (!doc) throw notFound(`Document '${documentId}' is not in collection '${slug}'.`);
  const days = deps.config.ORIGINALS_RETENTION_DAYS;
  const gone = `The original file of '${doc.filename}' is not kept`;
  if (doc.original_bytes === null) throw notFound(`${gone} (uploaded before originals were kept, or removed by retention): its text is.`);
  if (days > 0 && doc.created_at.getTime() < Date.now() - days * 86_400_000)
    throw notFound(`${gone}: SVC_ORIGINALS_RETENTION_DAYS keeps originals ${days} day${days === 1 ? '' : 's'}.`);
  const object = await deps.originals.get(originalKey({ id: documentId, collection_slug: slug }));
  if (!object) throw notFound(`${gone}: the object store no longer holds it.`);
  return { body: object.body, size: object.size, content_type: doc.content_type, filename: doc.filename };
}

async function documentOf(sql: Sql, slug: string, id: string) {
  const [row] = await sql.query<{ filename: string; content_type: string; original_bytes: number | null; created_at: Date }>(
    `SELECT filename, content_type, original_bytes, created_at FROM retrieval_documents WHERE collection_slug = $1 AND id = $2::uuid`,
    [slug, id],
  );
  return row;
}

const KEY = /^([a-z0-9][a-z0-9-]{0,61}[a-z0-9])\/([0-9a-f-]{36})$/;

/**
 * Lets go of originals past SVC_ORIGINALS_RETENTION_DAYS (their documents stay, read as text), and of objects
 * whose document no longer exists. Returns how many objects it removed.
 */
export async function sweepOriginals(deps: RetrievalDeps): Promise<number> {
  let removed = 0;
  const days = deps.config.ORIGINALS_RETENTION_DAYS;
  if (days > 0) {
    const expired = await deps.db.query<{ id: string; collection_slug: string }>(
      `UPDATE retrieval_documents SET original_bytes = NULL
       WHERE original_bytes IS NOT NULL AND created_at < now() - make_interval(days => $1)
       RETURNING id::text AS id, collection_slug`,
      [days],
    );
    for (const doc of expired) await deleteOriginal(deps, doc);
    removed += expired.length;
  }
  const objects = (await deps.originals.listTree('')).flatMap((o) => {
    const m = KEY.exec(o.key);
    return m ? [{ key: o.key, id: m[2]! }] : [];
  });
  if (objects.length === 0) return removed;
  const held = new Set(
    (
      await deps.db.query<{ id: string }>(
        `SELECT id::text AS id FROM retrieval_documents WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text($1::jsonb))::uuid[])`,
        [JSON.stringify(objects.map((o) => o.id))],
      )
    ).map((r) => r.id),
  );
  for (const o of objects.filter((o) => !held.has(o.id))) {
    await deps.originals.delete(o.key);
    removed++;
  }
  return removed;
}

/** Sweeps now and every hour, until stopped. */
export function startOriginalsSweep(deps: RetrievalDeps, everyMs = 3_600_000): { stop(): void } {
  const run = () =>
    void sweepOriginals(deps).catch((err: unknown) =>
      deps.logger.warn({ err, event: 'retrieval.originals_sweep_failed' }, 'the originals sweep failed; it runs again'),
    );
  const first = setTimeout(run, 10_000);
  const timer = setInterval(run, everyMs);
  first.unref();
  timer.unref();
  return {
    stop() {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}
