import type { Database } from '../../platform/db/index.ts';
import { chunkIdsOf, deleteChunks, rankDocumentsByPgvector } from '../document-store.ts';
import type { CollectionIndexes } from '../indexes.ts';
import type { KeywordIndexes } from '../keyword-index/index.ts';
import * as store from '../store.ts';
import { rankByKeywordCopy } from './keyword-copy.ts';
import type { ChunkBackend, DenseList } from './types.ts';

// The memory backend: chunks and embeddings in Postgres (retrieval_chunks), ranked exactly by the in-memory copy
// (indexes.ts) up to its size limit and by pgvector's scan past it or under a filter; keywords by the BM25 copy
// built from the same rows. A document's chunks go with its row through the foreign keys.

export type MemoryParts = { db: Database; indexes: CollectionIndexes; keywords: KeywordIndexes };

export function memoryBackend(deps: MemoryParts, collection: { slug: string; version: number }): ChunkBackend {
  const { slug, version } = collection;
  const found = (hits: (store.ChunkHit & { score: number })[]): DenseList => ({
    hits: hits.map((h) => ({ id: h.id, score: h.score })),
    rows: new Map(hits.map((h) => [h.id, h])),
    exact: true,
  });
  return {
    kind: 'memory',
    writeChunks: (tx, document, chunks) => store.copyChunks(tx, slug, document.id, chunks),
    async replaceChunks(tx, document, chunks) {
      await deleteChunks(tx, document.id);
      await store.copyChunks(tx, slug, document.id, chunks);
    },
    removeChunks: async () => {},
    discardChunks: async () => {},
    async drop() {
      deps.indexes.drop(slug);
      deps.keywords.drop(slug);
    },
    async dense(_caller, vector, k, { documents }) {
      // a filter's documents: pgvector's exact scan over their chunks alone (the in-memory copy ranks the whole collection)
      if (documents) return found(await rankDocumentsByPgvector(deps.db, slug, documents, [...vector], k));
      // the copy's ranking without text, whatever `read` asks: the caller reads the text of what it keeps (query.ts),
      // beside the audit record, which needs only the ranking
      const ranked = await deps.indexes.rankIds(deps.db, slug, version, vector, k);
      if (ranked !== 'too-large') return { hits: ranked.map((h) => ({ id: h.id, score: h.score })), rows: new Map(), exact: true };
      return found(await store.rankByPgvector(deps.db, slug, [...vector], k));
    },
    keyword: async (_caller, question, k, { documents }) =>
      rankByKeywordCopy(await deps.keywords.get(deps.db, slug, version), question, k, documents, (ids) => chunkIdsOf(deps.db, ids)),
    chunksByIds: (_caller, ids) => store.chunksByIds(deps.db, ids),
    pageChunks: (_caller, documentId, page) =>
      deps.db.query(`SELECT id::text AS chunk_id, text FROM retrieval_chunks WHERE document_id = $1::uuid AND page = $2 ORDER BY ordinal`, [
        documentId,
        page,
      ]),
  };
}
