import { randomUUID } from 'node:crypto';
import { notFound, unprocessable } from '../platform/errors.ts';
import type { Sql } from '../platform/db/index.ts';
import type { Caller } from '../platform/identity.ts';
import { requireAllowed, requireVisible } from './access.ts';
import { backendOf } from './backends/index.ts';
import { chunkPages } from './chunk.ts';
import type { RetrievalDeps } from './deps.ts';
import { detectFormat, extractDocument } from './ingest/index.ts';
import { retrievalProblem } from './errors.ts';
import { keepOriginal } from './originals.ts';
import * as store from './store.ts';
import { untrackedUpload, type UploadReporter } from './upload-progress.ts';
import { spoolUpload, type SpooledUpload } from './upload-stream.ts';
import { CODE_HEADER, encodeRow, unitRow } from './vector-index/index.ts';

export type DocumentView = {
  document_id: string;
  collection: string;
  filename: string;
  content_type: string;
  format: string;
  size_bytes: number;
  sha256: string;
  pages: number;
  ocr_pages: number;
  status: string;
  chunk_count: number;
  uploaded_by: string;
  created_at: string;
};

/** An upload's answer: the document, and whether the collection already held these bytes (then nothing was stored). */
export type UploadResult = { document: DocumentView & { duplicate: boolean }; created: boolean };

const view = (d: store.DocumentRow): DocumentView => ({
  document_id: d.id,
  collection: d.collection_slug,
  filename: d.filename,
  content_type: d.content_type,
  format: d.format,
  size_bytes: d.size_bytes,
  sha256: d.sha256,
  pages: d.page_count,
  ocr_pages: d.ocr_pages,
  status: d.status,
  chunk_count: d.chunk_count,
  uploaded_by: d.uploaded_by,
  created_at: d.created_at.toISOString(),
});
export { view as viewDocument };

export async function listDocuments(deps: RetrievalDeps, caller: Caller, slug: string): Promise<DocumentView[]> {
  await requireVisible(deps.policy, caller, slug, await store.findCollection(deps.db, slug));
  return (await store.listDocuments(deps.db, slug)).map(view);
}

/**
 * Upload: receive the file (hashing as it streams; in memory up to SVC_UPLOAD_MEMORY_BYTES, else to disk) while the
 * caller's access is checked, recognise the format, extract, chunk, embed, then write the document, its chunks and
 * embeddings in one transaction (the chunks with one binary COPY), then keep the file itself (originals.ts). Any
 * failure before the commit leaves nothing behind.
 *
 * A collection holds one document per content (sha256 of the bytes): bytes it already holds are answered with the
 * existing document, marked `duplicate`, once the name and first bytes are checked; the lookup runs while extraction
 * starts, and a duplicate stops the extraction at its next page. Uploads of one new file that race past that check
 * are decided by the unique index at the document's insert, the first part of the write: the losers write nothing
 * (no chunks, no version bump) and answer with the winner's document.
 */
export async function uploadDocument(
  deps: RetrievalDeps,
  caller: Caller,
  slug: string,
  request: Request,
  progress: UploadReporter = untrackedUpload,
): Promise<UploadResult> {
  try {
    const result = await receiveAndIngest(deps, caller, slug, request, progress);
    progress.done(result.document.document_id);
    return result;
  } catch (err) {
    progress.failed(retrievalProblem(err)?.detail ?? 'internal error');
    throw err;
  }
}

async function receiveAndIngest(
  deps: RetrievalDeps,
  caller: Caller,
  slug: string,
  request: Request,
  progress: UploadReporter,
): Promise<UploadResult> {
  // The body is received while the collection is looked up and the policy asked, but their answer decides first: a
  // caller who may not upload gets the same 403 or 404 whatever the body holds (even a malformed or oversized one),
  // and what was received for them is dropped (the rest of the body read and thrown away).
  const refused = new AbortController();
  const receiving = spoolUpload(request, {
    maxBytes: deps.config.MAX_UPLOAD_BYTES,
    memoryBytes: deps.config.UPLOAD_MEMORY_BYTES,
    tmpDir: deps.config.UPLOAD_TMP_DIR,
    signal: refused.signal,
    onBytes: (bytes, filename) => progress.received(bytes, filename),
  });
  receiving.catch(() => {}); // answered below
  try {
    // the collection's row without its counts: an upload needs only its roles
    const collection = await requireVisible(deps.policy, caller, slug, await store.collectionHead(deps.db, slug));
    await requireAllowed(deps.policy, caller, 'upload', collection);
  } catch (err) {
    refused.abort(err);
    // settled only once its temporary file, if any, is closed and removed
    await receiving.then(
      (upload) => upload.discard(),
      () => {},
    );
    throw err;
  }
  return ingestSpooled(deps, slug, await receiving, { user: caller.user, caller, progress });
}

/**
 * Ingests a file already received (an upload, or a watched file) into the collection, and removes its temporary
 * file if it has one.
 * `onStored` runs inside the transaction that stores a new document, so what the caller records with it (the
 * watch's file state, the document it replaces) commits or rolls back with the document.
 */
export async function ingestSpooled(
  deps: RetrievalDeps,
  slug: string,
  upload: SpooledUpload,
  // a caller's upload is charged against their embeddings limit; a watched file (no caller) is not
  uploader: { user: string; caller?: Caller; progress?: UploadReporter },
  onStored?: (tx: Sql, document: store.DocumentRow) => Promise<void>,
): Promise<UploadResult> {
  let format = 'unknown';
  const progress = uploader.progress ?? untrackedUpload;
  // stops an extraction whose text is no longer wanted (a duplicate, or any failure on the way)
  const abandon = new AbortController();
  try {
    if (upload.size === 0)
      throw unprocessable(`${upload.filename} is empty (0 bytes): there is no text to index. Upload the file with its content.`);
    const detected = detectFormat({
      filename: upload.filename,
      declaredType: upload.declaredType,
      head: upload.head,
      ocrEnabled: deps.config.RAG_OCR_ENABLED,
    });
    format = detected.format;
    // Extraction (pdf.js, on this thread) starts while the database looks the content up in another process; the
    // lookup still decides first, after the name and first bytes are checked (a refused file is refused whatever
    // the collection holds), so a duplicate is answered as such even when its extraction would fail.
    const extraction = extractDocument({
      filename: upload.filename,
      format: detected.format,
      content: upload.content,
      ocr: deps.ocr,
      pdfWorkers: deps.pdfWorkers,
      ocrEnabled: deps.config.RAG_OCR_ENABLED,
      maxExtractedBytes: deps.config.RAG_MAX_EXTRACTED_BYTES,
      signal: abandon.signal,
      onProgress: (done, total) => progress.extracting(done, total),
    });
    progress.extracting(0, null);
    extraction.catch(() => {}); // answered below, or abandoned
    const held = await store.findDocumentByContent(deps.db, slug, upload.sha256);
    if (held) return duplicate(deps, held);
    const extracted = await extraction;
    progress.extracting(extracted.pages.length, extracted.pages.length);
    const chunks = chunkPages(extracted.pages, {
      size: deps.config.CHUNK_SIZE_TOKENS,
      overlap: deps.config.CHUNK_OVERLAP_TOKENS,
      maxChars: deps.config.CHUNK_MAX_CHARS,
    });
    // The charge comes before a gateway's embedding (which costs what the charge allows); the offline embedder costs
    // nothing, so its hashing runs while the charge's round trips are in flight. A refusal still answers before
    // anything is written.
    const charging = uploader.caller ? deps.limiter.charge(uploader.caller, 'retrieval.embedding', chunks.length) : undefined;
    charging?.catch(() => {}); // answered below
    if (!deps.embedder.offline) await charging;
    const vectors = await embedChunks(deps, chunks, progress);
    await charging;
    const documentId = randomUUID();
    const rows = chunks.map((c, i) => ({ id: randomUUID(), ordinal: c.index, page: c.page, text: c.text, ...storedForm(vectors[i]!) }));
    const document: Omit<store.DocumentRow, 'created_at' | 'original_bytes'> = {
      id: documentId,
      collection_slug: slug,
      filename: upload.filename,
      content_type: upload.declaredType || 'application/octet-stream',
      format: detected.format,
      size_bytes: upload.size,
      sha256: upload.sha256,
      page_count: extracted.pages.length,
      ocr_pages: extracted.ocrPages,
      status: 'INDEXED',
      chunk_count: rows.length,
      uploaded_by: uploader.user,
      text_bytes: rows.reduce((bytes, c) => bytes + Buffer.byteLength(c.text), 0),
    };
    // The chunks and the version bump are written only if the document row went in, so an upload that lost the
    // unique index to another writes nothing. The document's insert bumps the version too (a round trip fewer),
    // unless its caller records something: that (a watch letting go of the document this one replaces) comes before
    // the bump, the order of the watch's other writes (let a document go, then bump), so no two take the same rows in
    // opposite orders.
    progress.writing();
    // where the collection keeps its chunks (it may have been deleted while the file was read: 404)
    const head = await store.collectionHead(deps.db, slug);
    if (!head) throw notFound(`Collection '${slug}' does not exist.`);
    const backend = backendOf(deps, head);
    const written = deps.db.transaction(async (tx) => {
      // with the text as extracted, which the document's text download and a re-index read
      const inserted = await store.insertDocument(tx, document, { bump: !onStored, pages: extracted.pages });
      if (!inserted) return undefined;
      await backend.writeChunks(tx, { id: documentId, filename: upload.filename }, rows);
      if (onStored) {
        await onStored(tx, inserted);
        await store.bumpCollectionVersion(tx, slug);
      }
      return inserted;
    });
    // chunks written to the lake or OpenSearch by a transaction that then failed are removed (best effort: see
    // docs/retrieval.md)
    const stored = await written.catch(async (err: unknown) => {
      await backend.discardChunks(documentId);
      throw err;
    });
    if (!stored) {
      // another upload of the same bytes committed first: nothing was written, answer with its document (which can
      // only be gone if the collection or the document was deleted in between)
      const held = await store.findDocumentByContent(deps.db, slug, upload.sha256);
      if (!held) throw new Error(`upload of ${upload.sha256} to ${slug} lost a race to a document that no longer exists`);
      return duplicate(deps, held);
    }
    // the file itself, once the document is there (the upload's temporary file, if any, goes after it)
    await keepOriginal(deps, stored, upload);
    deps.metrics.documentsIngested.inc({ outcome: 'indexed', format });
    deps.metrics.chunksIngested.inc(rows.length);
    return { document: { ...view(stored), duplicate: false }, created: true };
  } catch (err) {
    const refused = retrievalProblem(err);
    deps.metrics.documentsIngested.inc({ outcome: refused && refused.status < 500 ? 'rejected' : 'failed', format });
    throw err;
  } finally {
    abandon.abort();
    await upload.discard();
  }
}

/**
 * The chunks' embeddings, asked a batch (SVC_EMBED_BATCH_SIZE) at a time, as the gateway would be asked anyway, so
 * that an upload's progress can say how many are done.
 */
export async function embedChunks(deps: RetrievalDeps, chunks: readonly { text: string }[], progress: UploadReporter): Promise<number[][]> {
  const vectors: number[][] = [];
  const batch = deps.config.EMBED_BATCH_SIZE;
  for (let i = 0; i < chunks.length; i += batch) {
    progress.embedding(i, chunks.length);
    vectors.push(...(await deps.embedder.embed(chunks.slice(i, i + batch).map((c) => c.text))));
  }
  progress.embedding(chunks.length, chunks.length);
  return vectors;
}

/**
 * An embedding as the database keeps it: float32 values (what pgvector stores), and the row code the in-memory
 * index loads, computed from those same values so that scores read back from either agree exactly.
 */
export function storedForm(vector: readonly number[]): { embedding: Float32Array; code: Uint8Array } {
  const embedding = Float32Array.from(vector);
  const unit = unitRow(embedding, embedding.length, new Float64Array(embedding.length), new Float32Array(embedding.length));
  return { embedding, code: encodeRow(unit, embedding.length, new Uint8Array(CODE_HEADER + embedding.length)) };
}

function duplicate(deps: RetrievalDeps, held: store.DocumentRow): UploadResult {
  deps.metrics.documentsIngested.inc({ outcome: 'duplicate', format: held.format });
  return { document: { ...view(held), duplicate: true }, created: false };
}
