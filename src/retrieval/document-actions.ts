import { randomUUID } from 'node:crypto';
import { appendAudit } from '../platform/audit/index.ts';
import type { Sql } from '../platform/db/index.ts';
import { conflict, notFound } from '../platform/errors.ts';
import type { Caller } from '../platform/identity.ts';
import { requireAllowed, requireQueryable, requireVisible } from './access.ts';
import { backendOf } from './backends/index.ts';
import { chunkPages } from './chunk.ts';
import type { RetrievalDeps } from './deps.ts';
import { deleteDocumentRow, findDocument, readPages, setChunkCount } from './document-store.ts';
import { storedForm, viewDocument, type DocumentView } from './documents.ts';
import { deleteOriginal } from './originals.ts';
import * as store from './store.ts';

// One document's actions: delete it, re-index it from its stored text, read that text. Each asks the collections
// policy (a collection the caller may not see is a 404, as everywhere), finds the document in that collection (an id
// of another collection's document is a 404 too), and writes in one transaction with its audit record inside.

type Subject = { collection: store.CollectionHead; document: store.DocumentRow };

async function subject(deps: RetrievalDeps, caller: Caller, slug: string, documentId: string): Promise<Subject> {
  const collection = await requireVisible(deps.policy, caller, slug, await store.collectionHead(deps.db, slug));
  const document = await findDocument(deps.db, slug, documentId);
  if (!document) throw notFound(`Document '${documentId}' is not in collection '${slug}'.`);
  return { collection, document };
}

const noText = (d: store.DocumentRow) =>
  conflict(
    `Document '${d.filename}' (${d.id}) was stored before svc kept extracted text, so it has none to serve or re-index: ` +
      'upload the file again (delete this document first, or the upload answers that the collection already holds it).',
  );

/** DELETE /collections/{slug}/documents/{id}: the document, its chunks, its pages and its index entries, or nothing. */
export async function deleteDocument(deps: RetrievalDeps, caller: Caller, slug: string, documentId: string): Promise<{ deleted: string }> {
  const { collection, document } = await subject(deps, caller, slug, documentId);
  await requireAllowed(deps.policy, caller, 'delete_document', collection, document);
  // its original file goes once the rows are gone; one that cannot be removed now goes with the hourly sweep
  const after = (removed: store.DocumentRow) =>
    deleteOriginal(deps, removed).catch((err: unknown) => {
      deps.logger.warn({ err, event: 'retrieval.original_not_deleted', document: removed.id }, 'original left for the sweep');
    });
  // a lake collection's rows go inside the transaction: if Trino cannot delete them, the document stays
  const backend = backendOf(deps, collection);
  const inside = (tx: Sql, removed: store.DocumentRow) => backend.removeChunks(tx, removed.id);
  if (!(await removeDocument(deps, slug, documentId, { actor: caller.user, inside, after })))
    throw notFound(`Document '${documentId}' is not in collection '${slug}'.`);
  return { deleted: documentId };
}

/**
 * Removes a document, without asking the policy (the caller has): in one transaction its row goes, its chunks and
 * stored pages with it through the foreign keys, the collection moves to a new version (so every replica's vector
 * and keyword copies drop its chunks at their next use) and the deletion is appended to the audit chain. Retrieval
 * audit records that named its chunks stay as they were. `inside` runs in that transaction (what else must go with
 * the document, or stay); `after` runs once it committed (what cannot be rolled back, such as an original file in
 * the object store). Undefined when the collection no longer held the document.
 */
export async function removeDocument(
  deps: Pick<RetrievalDeps, 'db'>,
  slug: string,
  documentId: string,
  opts: {
    actor: string;
    inside?: (tx: Sql, removed: store.DocumentRow) => Promise<void>;
    after?: (removed: store.DocumentRow) => Promise<void>;
  },
): Promise<store.DocumentRow | undefined> {
  const removed = await deps.db.transaction(async (tx) => {
    const row = await deleteDocumentRow(tx, slug, documentId);
    if (!row) return undefined;
    await opts.inside?.(tx, row);
    await appendAudit(tx, {
      service: 'retrieval',
      action: 'document.delete',
      actor: opts.actor,
      detail: { collection: slug, document_id: row.id, filename: row.filename, sha256: row.sha256, chunk_count: row.chunk_count },
    });
    return row;
  });
  if (removed) await opts.after?.(removed);
  return removed;
}

/**
 * POST /collections/{slug}/documents/{id}/reindex: chunks the stored text again with today's chunk settings, embeds
 * the chunks with today's model, and replaces the old chunks with the new in one transaction (a query sees the old
 * set or the new, never a mix, and a failure on the way leaves the old). Charged like an upload's embeddings.
 */
export async function reindexDocument(deps: RetrievalDeps, caller: Caller, slug: string, documentId: string): Promise<DocumentView> {
  const { collection, document } = await subject(deps, caller, slug, documentId);
  await requireAllowed(deps.policy, caller, 'reindex_document', collection, document);
  const pages = await readPages(deps.db, documentId);
  if (pages.length === 0) throw noText(document);
  const chunks = chunkPages(pages, {
    size: deps.config.CHUNK_SIZE_TOKENS,
    overlap: deps.config.CHUNK_OVERLAP_TOKENS,
    maxChars: deps.config.CHUNK_MAX_CHARS,
  });
  await deps.limiter.charge(caller, 'retrieval.embedding', chunks.length);
  const vectors = chunks.length === 0 ? [] : await deps.embedder.embed(chunks.map((c) => c.text));
  const rows = chunks.map((c, i) => ({ id: randomUUID(), ordinal: c.index, page: c.page, text: c.text, ...storedForm(vectors[i]!) }));
  const reindexed = await deps.db.transaction(async (tx) => {
    // still there (not deleted while it was embedded): its row is held until the commit
    const [held] = await tx.query(`SELECT id FROM retrieval_documents WHERE id = $1::uuid AND collection_slug = $2 FOR UPDATE`, [
      documentId,
      slug,
    ]);
    if (!held) return undefined;
    await backendOf(deps, collection).replaceChunks(tx, { id: documentId, filename: document.filename }, rows);
    await setChunkCount(tx, documentId, rows);
    await store.bumpCollectionVersion(tx, slug);
    await appendAudit(tx, {
      service: 'retrieval',
      action: 'document.reindex',
      actor: caller.user,
      detail: {
        collection: slug,
        document_id: documentId,
        chunks_before: document.chunk_count,
        chunks_after: rows.length,
        embed_model: deps.embedder.model,
        chunk_size: deps.config.CHUNK_SIZE_TOKENS,
        chunk_overlap: deps.config.CHUNK_OVERLAP_TOKENS,
      },
    });
    return findDocument(tx, slug, documentId);
  });
  if (!reindexed) throw notFound(`Document '${documentId}' is not in collection '${slug}'.`);
  deps.metrics.chunksIngested.inc(rows.length);
  return viewDocument(reindexed);
}

/**
 * GET /collections/{slug}/documents/{id}/text: the text ingestion extracted, pages separated by a form feed (as
 * pdftotext writes them). Reading a document's text is reading the collection: whoever may query it may.
 */
export async function documentText(
  deps: RetrievalDeps,
  caller: Caller,
  slug: string,
  documentId: string,
): Promise<{ filename: string; text: string }> {
  const { collection, document } = await subject(deps, caller, slug, documentId);
  await requireQueryable(deps, caller, collection);
  const pages = await readPages(deps.db, documentId);
  if (pages.length === 0) throw noText(document);
  return { filename: textFilename(document.filename), text: pages.map((p) => p.text).join('\f\n') };
}

/** report.pdf -> report.txt; notes.txt -> notes.txt */
const textFilename = (filename: string) => `${filename.replace(/\.[^./\\]{1,10}$/, '') || 'document'}.txt`;
