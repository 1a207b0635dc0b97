import type { Sql } from '../../platform/db/index.ts';
import type { Caller } from '../../platform/identity.ts';
import type { Scored } from '../fuse.ts';
import type { ChunkHit, ChunkInsert } from '../store.ts';

// The seam between a collection and where its chunks are (index.ts chooses): a plain object of functions, one per
// thing the backends do differently, bound to one collection.

export type BackendKind = 'memory' | 'lake' | 'search';
export const BACKENDS = ['memory', 'lake', 'search'] as const satisfies readonly BackendKind[];

/**
 * The dense candidates and the rows read with them (so a chunk is not read twice). `exact` is false where an
 * approximate index (OpenSearch's k-NN) ranked them.
 */
export type DenseList = { hits: Scored[]; rows: Map<string, ChunkHit>; exact: boolean };

export type ChunkBackend = {
  readonly kind: BackendKind;
  /** A new document's chunks, inside the transaction that inserts its row: the row commits only if they were written. */
  writeChunks(tx: Sql, document: { id: string; filename: string }, chunks: readonly ChunkInsert[]): Promise<void>;
  /** A re-index: the document's chunks replaced by these, inside the transaction that holds its row. */
  replaceChunks(tx: Sql, document: { id: string; filename: string }, chunks: readonly ChunkInsert[]): Promise<void>;
  /**
   * The document's chunks go from where the backend keeps them outside Postgres (its row is gone, or never
   * committed); the memory backend's foreign keys did it already.
   */
  removeChunks(sql: Sql, documentId: string): Promise<void>;
  /**
   * The chunks of a document whose upload failed, written outside Postgres before it did: removed, best effort, never
   * throwing (what cannot be removed now is the backend's to remove later).
   */
  discardChunks(documentId: string): Promise<void>;
  /** The collection is gone: its chunk storage and the copies kept of it. */
  drop(): Promise<void>;
  /**
   * The exact top `k` chunks by cosine similarity to `vector`, best first, equal scores in insertion order; with
   * `documents`, among their chunks only. `read` 'ids' may leave the rows out (hybrid reads only its winners).
   */
  dense(
    caller: Caller,
    vector: readonly number[],
    k: number,
    opts: { documents?: string[] | undefined; read: 'chunks' | 'ids' },
  ): Promise<DenseList>;
  /**
   * The top `k` chunks by BM25 over the question's terms, best first; with `documents`, among their chunks only.
   * 'too-large' where svc's own BM25 copy would pass SVC_RAG_KEYWORD_INDEX_MAX_CHUNKS.
   */
  keyword(caller: Caller, question: string, k: number, opts: { documents?: string[] | undefined }): Promise<Scored[] | 'too-large'>;
  /** The chunks that start on a page of a document, in order: what a citation opens (pages.ts). */
  pageChunks(caller: Caller, documentId: string, page: number): Promise<{ chunk_id: string; text: string }[]>;
  /** The chunks with these ids, with their documents; a chunk gone since it was ranked is left out. */
  chunksByIds(caller: Caller, ids: string[]): Promise<ChunkHit[]>;
};
