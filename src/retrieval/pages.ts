import { notFound } from '../platform/errors.ts';
import type { Sql } from '../platform/db/index.ts';
import type { Caller } from '../platform/identity.ts';
import { requireQueryable, requireVisible } from './access.ts';
import { backendOf } from './backends/index.ts';
import type { RetrievalDeps } from './deps.ts';
import * as store from './store.ts';

// A page of a document as its chunks hold it: what a citation opens (filename, page, the text to find the quote in).
// The original file is not kept, so a page is the chunks that start on it, in order. Reading text is a query of the
// collection: whoever may query it may read its pages.

export type PageView = {
  document_id: string;
  filename: string;
  page: number;
  pages: number;
  chunks: { chunk_id: string; text: string }[];
};

export async function readPage(deps: RetrievalDeps, caller: Caller, slug: string, documentId: string, page: number): Promise<PageView> {
  const collection = await requireVisible(deps.policy, caller, slug, await store.collectionHead(deps.db, slug));
  await requireQueryable(deps, caller, collection);
  const doc = await documentOf(deps.db, slug, documentId);
  if (!doc) throw notFound(`Document '${documentId}' is not in collection '${slug}'.`);
  if (page > doc.page_count)
    throw notFound(`Document '${doc.filename}' has ${doc.page_count} page${doc.page_count === 1 ? '' : 's'}; there is no page ${page}.`);
  const chunks = await backendOf(deps, collection).pageChunks(caller, documentId, page);
  return { document_id: documentId, filename: doc.filename, page, pages: doc.page_count, chunks };
}

// Its own statement, beside the one function that reads it (the page's chunks come from the collection's backend).
async function documentOf(sql: Sql, slug: string, id: string): Promise<{ filename: string; page_count: number } | undefined> {
  const [row] = await sql.query<{ filename: string; page_count: number }>(
    `SELECT filename, page_count FROM retrieval_documents WHERE collection_slug = $1 AND id = $2::uuid`,
    [slug, id],
  );
  return row;
}
