import { randomUUID } from 'node:crypto';
import { notFound, unprocessable } from '../platform/errors.ts';
import type { Sql } from '../platform/db/index.ts';
import type { Caller } from '../platform/identity.ts';
import { requireAllowed, requireVisible } from './access.ts';
import { backendOf, type ChunkBackend } from './backends/index.ts';
import { chunkPages, type Page } from './chunk.ts';
import type { RetrievalDeps } from './deps.ts';
import { detectFormat, extractDocument, type Extracted } from './ingest/index.ts';
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
 * caller's access is checked, recognise the format, extract (starting once the file is in, answering once access is
 * granted), chunk, embed, then write the document, its chunks and embeddings in one transaction (the chunks with one
 * binary COPY), then keep the file itself (originals.ts). Any failure before the commit leaves nothing behind.
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
  // and what was received for them is dropped (the rest of the body read and thrown away). A body received before the
  // answer starts its extraction and duplicate lookup (ingestSpooled's `admitted`), which answer nothing until then.
  const refused = new AbortController();
  const receiving = spoolUpload(request, {
    maxBytes: deps.config.MAX_UPLOAD_BYTES,
    memoryBytes: deps.config.UPLOAD_MEMORY_BYTES,
    tmpDir: deps.config.UPLOAD_TMP_DIR,
    signal: refused.signal,
    onBytes: (bytes, filename) => progress.received(bytes, filename),
  });
  receiving.catch(() => {}); // answered below
  const admitted = (async () => {
    // the collection's row without its counts: an upload needs only its roles
    const collection = await requireVisible(deps.policy, caller, slug, await store.collectionHead(deps.db, slug));
    await requireAllowed(deps.policy, caller, 'upload', collection);
  })();
  admitted.catch((err: unknown) => refused.abort(err));
  let upload: SpooledUpload;
  try {
    // settled only once its temporary file, if any, is closed and removed
    upload = await receiving;
  } catch (err) {
    await admitted; // a refusal is the answer, whatever happened to the body
    throw err;
  }
  return ingestSpooled(deps, slug, upload, { user: caller.user, caller, progress, admitted });
}

/**
 * Ingests a file already received (an upload, or a watched file) into the collection, and removes its temporary
 * file if it has one.
 * `admitted`, for a caller's upload, is the access decision still being made: the file's extraction and duplicate
 * lookup start beside it, but nothing is answered, charged or written before it allows, and a refusal is the answer
 * (the extraction stopped at its next page).
 * `onStored` runs inside the transaction that stores a new document, so what the caller records with it (the
 * watch's file state, the document it replaces) commits or rolls back with the document.
 */
export async function ingestSpooled(
  deps: RetrievalDeps,
  slug: string,
  upload: SpooledUpload,
  // a caller's upload is charged against their embeddings limit; a watched file (no caller) is not
  uploader: { user: string; caller?: Caller; progress?: UploadReporter; admitted?: Promise<void> },
  onStored?: (tx: Sql, document: store.DocumentRow) => Promise<void>,
): Promise<UploadResult> {
  const progress = uploader.progress ?? untrackedUpload;
  // stops an extraction whose text is no longer wanted (a refusal, a duplicate, or any failure on the way)
  const abandon = new AbortController();
  let begun: Begun | { refused: unknown };
  try {
    begun = beginIngest(deps, slug, upload, abandon.signal, progress);
  } catch (err) {
    begun = { refused: err }; // the file's own refusal, answered once the caller is admitted
  }
  if (uploader.admitted) {
    try {
      await uploader.admitted;
    } catch (err) {
      abandon.abort();
      await upload.discard();
      throw err;
    }
  }
  const format = 'format' in begun ? begun.format : 'unknown';
  try {
    if ('refused' in begun) throw begun.refused;
    progress.extracting(0, null);
    // the lookup decides first, after the name and first bytes are checked (a refused file is refused whatever the
    // collection holds), so a duplicate is answered as such even when its extraction would fail
    const held = await begun.held;
    if (held) return duplicate(deps, held);
    const extracted = await begun.extraction;
    progress.extracting(extracted.pages.length, extracted.pages.length);
    const chunks = chunkPages(extracted.pages, {
      size: deps.config.CHUNK_SIZE_TOKENS,
      overlap: deps.config.CHUNK_OVERLAP_TOKENS,
      maxChars: deps.config.CHUNK_MAX_CHARS,
    });
    // where the collection keeps its chunks, read again (it may have been deleted while the file was read: 404 below,
    // after the charge's answer as before), while the charge and the embedding run
    const heading = store.collectionHead(deps.db, slug);
    heading.catch(() => {}); // answered below
    // The charge comes before a gateway's embedding (which costs what the charge allows); the offline embedder costs
    // nothing, so its hashing runs while the charge's round trips are in flight. A refusal still answers before
    // anything is written.
    const charging = uploader.caller ? deps.limiter.charge(uploader.caller, 'retrieval.embedding', chunks.length) : undefined;
    charging?.catch(() => {}); // answered below
    if (!deps.embedder.offline) await charging;
    else await queriesSent();
    const vectors = await embedChunks(deps, chunks, progress);
    const documentId = randomUUID();
    const rows = chunks.map((c, i) => ({ id: randomUUID(), ordinal: c.index, page: c.page, text: c.text, ...storedForm(vectors[i]!) }));
    await charging;
    const document: Omit<store.DocumentRow, 'created_at'> = {
      id: documentId,
      collection_slug: slug,
      filename: upload.filename,
      content_type: upload.declaredType || 'application/octet-stream',
      format,
      size_bytes: upload.size,
      sha256: upload.sha256,
      page_count: extracted.pages.length,
      ocr_pages: extracted.ocrPages,
      status: 'INDEXED',
      chunk_count: rows.length,
      uploaded_by: uploader.user,
      text_bytes: rows.reduce((bytes, c) => bytes + Buffer.byteLength(c.text), 0),
      // the file is kept once the document has committed, and recorded with it now (originals.ts)
      original_bytes: upload.size,
    };
    progress.writing();
    const head = await heading;
    if (!head) throw notFound(`Collection '${slug}' does not exist.`);
    const backend = backendOf(deps, head);
    const written = writeDocument(deps.db, backend, document, rows, extracted.pages, onStored);
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
    abandon.abort(FINISHED);
    await upload.discard();
  }
}

/**
 * Why a finished upload lets go of its extraction (which has ended, unless the upload failed): one reason for all,
 * since abort() without one makes a DOMException and its stack on every upload (0.1 ms of the thread that answers).
 */
const FINISHED = new Error('the upload no longer needs its text');

type Begun = { format: string; extraction: Promise<Extracted>; held: Promise<store.DocumentRow | undefined> };

/**
 * Checks the file's name and first bytes (throwing their refusal) and starts its extraction (on the PDF workers, or
 * this thread) and the database's lookup of its content, neither of which is answered yet.
 */
function beginIngest(deps: RetrievalDeps, slug: string, upload: SpooledUpload, signal: AbortSignal, progress: UploadReporter): Begun {
  if (upload.size === 0)
    throw unprocessable(`${upload.filename} is empty (0 bytes): there is no text to index. Upload the file with its content.`);
  const { format } = detectFormat({
    filename: upload.filename,
    declaredType: upload.declaredType,
    head: upload.head,
    ocrEnabled: deps.config.RAG_OCR_ENABLED,
  });
  const extraction = extractDocument({
    filename: upload.filename,
    format,
    content: upload.content,
    ocr: deps.ocr,
    pdfWorkers: deps.pdfWorkers,
    ocrEnabled: deps.config.RAG_OCR_ENABLED,
    maxExtractedBytes: deps.config.RAG_MAX_EXTRACTED_BYTES,
    signal,
    onProgress: (done, total) => progress.extracting(done, total),
  });
  extraction.catch(() => {}); // answered by the caller, or abandoned
  const held = store.findDocumentByContent(deps.db, slug, upload.sha256);
  held.catch(() => {}); // likewise
  return { format, extraction, held };
}

/**
 * Two turns of the event loop: postgres.js writes the queries made on one turn out on the next (setImmediate), so
 * after these the statements just started are on their way and a synchronous stretch (the offline embedder's
 * hashing) no longer holds them back.
 */
const queriesSent = async () => {
  for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
};

/**
 * The document's row (which bumps the version in the same statement unless `onStored` records something), its
 * pages and its chunks in one transaction; undefined, with nothing written, when the collection already holds the
 * content. The chunks are kept only if the document row went in: on the memory backend their COPY is sent right
 * behind the row's insert without waiting for its answer (a round trip fewer), and if the insert found the content
 * held the chunks' foreign key refuses the COPY and the transaction rolls back; the lake and OpenSearch, outside
 * the transaction, are written only once the row is in.
 * What `onStored` records (a watch letting go of the document this one replaces) comes before a separate bump, the
 * order of the watch's other writes (let a document go, then bump), so no two take the same rows in opposite orders.
 */
async function writeDocument(
  db: RetrievalDeps['db'],
  backend: ChunkBackend,
  document: Omit<store.DocumentRow, 'created_at'>,
  rows: store.ChunkInsert[],
  pages: readonly Page[],
  onStored: ((tx: Sql, document: store.DocumentRow) => Promise<void>) | undefined,
): Promise<store.DocumentRow | undefined> {
  const target = { id: document.id, filename: document.filename };
  try {
    return await db.transaction(async (tx) => {
      // with the text as extracted, which the document's text download and a re-index read
      const inserting = store.insertDocument(tx, document, { bump: !onStored, pages });
      const copying = backend.kind === 'memory' ? backend.writeChunks(tx, target, rows) : undefined;
      copying?.catch(() => {}); // answered below
      const inserted = await inserting.catch(async (err: unknown) => {
        await copying?.catch(() => {}); // the connection takes the rollback once the COPY is over
        throw err;
      });
      if (!inserted) {
        if (!copying) return undefined;
        await copying.catch(() => {});
        throw HELD; // the chunks' COPY was refused, or not: either way nothing of this upload stays
      }
      await (copying ?? backend.writeChunks(tx, target, rows));
      if (onStored) {
        await onStored(tx, inserted);
        await store.bumpCollectionVersion(tx, document.collection_slug);
      }
      return inserted;
    });
  } catch (err) {
    if (err === HELD) return undefined;
    throw err;
  }
}

/** Rolls back a transaction whose document the collection turned out to hold already. */
const HELD = new Error('the collection holds this content already');

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
  const dim = embedding.length;
  // the unit vector is only a step to the code: one scratch pair per dimension, not two arrays a chunk
  if (unitScratch.wide.length !== dim) unitScratch = { wide: new Float64Array(dim), unit: new Float32Array(dim) };
  const unit = unitRow(embedding, dim, unitScratch.wide, unitScratch.unit);
  return { embedding, code: encodeRow(unit, dim, new Uint8Array(CODE_HEADER + dim)) };
}
let unitScratch = { wide: new Float64Array(0), unit: new Float32Array(0) };

function duplicate(deps: RetrievalDeps, held: store.DocumentRow): UploadResult {
  deps.metrics.documentsIngested.inc({ outcome: 'duplicate', format: held.format });
  return { document: { ...view(held), duplicate: true }, created: false };
}
