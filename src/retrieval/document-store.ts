import type { Sql } from '../platform/db/index.ts';
import type { Page } from './chunk.ts';
import type { DocumentRow } from './store.ts';

// The statements of the per-document actions (delete, re-index, text) and of the query filter: one document's row,
// its stored pages, and the documents a filter keeps. store.ts holds the upload and ranking paths.

export async function findDocument(sql: Sql, slug: string, id: string): Promise<DocumentRow | undefined> {
  const [row] = await sql.query<DocumentRow>(`SELECT * FROM retrieval_documents WHERE collection_slug = $1 AND id = $2::uuid`, [slug, id]);
  return row;
}

/** The stored pages, in page order; empty for a document stored before pages were kept. */
export function readPages(sql: Sql, documentId: string): Promise<Page[]> {
  return sql.query<Page>(`SELECT page, text FROM retrieval_document_pages WHERE document_id = $1::uuid ORDER BY page`, [documentId]);
}

/** Removes the document (its chunks and pages go with it through the foreign keys) and moves the collection on. */
export async function deleteDocumentRow(sql: Sql, slug: string, id: string): Promise<DocumentRow | undefined> {
  const [row] = await sql.query<DocumentRow>(
    `WITH gone AS (DELETE FROM retrieval_documents WHERE collection_slug = $1 AND id = $2::uuid RETURNING *),
     bump AS (
       UPDATE retrieval_collections SET version = nextval('retrieval_collection_versions')
       WHERE slug = $1 AND EXISTS (SELECT 1 FROM gone))
     SELECT * FROM gone`,
    [slug, id],
  );
  return row;
}

/** Removes every chunk of the document, before its new ones are written in the same transaction. */
export async function deleteChunks(sql: Sql, documentId: string): Promise<void> {
  await sql.query(`DELETE FROM retrieval_chunks WHERE document_id = $1::uuid`, [documentId]);
}

/** After a re-index: its chunk count and the bytes of their text (counted in the collection's size). */
export async function setChunkCount(sql: Sql, documentId: string, chunks: readonly { text: string }[]): Promise<void> {
  const textBytes = chunks.reduce((bytes, c) => bytes + Buffer.byteLength(c.text), 0);
  await sql.query(`UPDATE retrieval_documents SET chunk_count = $2, text_bytes = $3, status = 'INDEXED' WHERE id = $1::uuid`, [
    documentId,
    chunks.length,
    textBytes,
  ]);
}

export type DocumentFilter = {
  document_ids?: string[] | undefined;
  formats?: string[] | undefined;
  uploaded_after?: string | undefined;
  uploaded_before?: string | undefined;
};

/** The ids of the collection's documents the filter keeps: uploaded at or after `uploaded_after`, before `uploaded_before`. */
export async function filteredDocuments(sql: Sql, slug: string, f: DocumentFilter): Promise<string[]> {
  const rows = await sql.query<{ id: string }>(
    `SELECT id::text AS id FROM retrieval_documents
     WHERE collection_slug = $1
       AND ($2::jsonb IS NULL OR id::text IN (SELECT jsonb_array_elements_text($2::jsonb)))
       AND ($3::jsonb IS NULL OR format IN (SELECT jsonb_array_elements_text($3::jsonb)))
       AND ($4::timestamptz IS NULL OR created_at >= $4::timestamptz)
       AND ($5::timestamptz IS NULL OR created_at < $5::timestamptz)`,
    [
      slug,
      f.document_ids ? JSON.stringify(f.document_ids.map((id) => id.toLowerCase())) : null,
      f.formats ? JSON.stringify(f.formats) : null,
      f.uploaded_after ?? null,
      f.uploaded_before ?? null,
    ],
  );
  return rows.map((r) => r.id);
}

/** Which of these ids are documents of the collection. */
export async function knownDocuments(sql: Sql, slug: string, ids: string[]): Promise<Set<string>> {
  const rows = await sql.query<{ id: string }>(
    `SELECT id::text AS id FROM retrieval_documents
     WHERE collection_slug = $1 AND id::text IN (SELECT jsonb_array_elements_text($2::jsonb))`,
    [slug, JSON.stringify(ids.map((id) => id.toLowerCase()))],
  );
  return new Set(rows.map((r) => r.id));
}

/** The ids of the chunks of these documents: what keyword ranking may offer under a filter. */
export async function chunkIdsOf(sql: Sql, documentIds: string[]): Promise<Set<string>> {
  const rows = await sql.query<{ id: string }>(
    `SELECT id::text AS id FROM retrieval_chunks WHERE document_id = ANY(ARRAY(SELECT jsonb_array_elements_text($1::jsonb))::uuid[])`,
    [JSON.stringify(documentIds)],
  );
  return new Set(rows.map((r) => r.id));
}

/** pgvector's exact ranking over the chunks of these documents only: dense ranking under a filter. */
export async function rankDocumentsByPgvector(
  sql: Sql,
  slug: string,
  documentIds: string[],
  query: number[],
  k: number,
): Promise<{ id: string; document_id: string; filename: string; page: number; text: string; score: number }[]> {
  return sql.query(
    `SELECT k.id::text AS id, k.document_id::text AS document_id, d.filename, k.page, k.text,
            1 - (k.embedding <=> $3::vector) AS score
     FROM retrieval_chunks k JOIN retrieval_documents d ON d.id = k.document_id
     WHERE k.collection_slug = $1 AND k.document_id = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb))::uuid[])
     ORDER BY k.embedding <=> $3::vector, k.seq
     LIMIT $4`,
    [slug, JSON.stringify(documentIds), `[${query.join(',')}]`, k],
  );
}
