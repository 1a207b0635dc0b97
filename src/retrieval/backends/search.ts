import { randomBytes } from 'node:crypto';
import { type API, Client, errors } from '@opensearch-project/opensearch';
import type { Sql } from '../../platform/db/index.ts';
import type { Logger } from '../../platform/log.ts';
import type { ChunkInsert } from '../store.ts';
import { memoryBackend, type MemoryParts } from './memory.ts';
import { cosineOf, indexDefinition, keywordQuery, knnQuery } from './search-index.ts';
import type { ChunkBackend } from './types.ts';

// The search backend: a collection's chunks stay in Postgres (retrieval_chunks, as on the memory backend: texts,
// pages and the exact copy come from there) and are indexed in an OpenSearch index of the collection's own, which
// ranks them by BM25 and, where the k-NN plugin is installed, by Lucene's HNSW (not exact: the query says so). Every
// replica asks the same index, so none builds a keyword copy of its own. The policy decides who reads a collection
// before OpenSearch is asked; the index holds no role. docs/retrieval.md, "The search backend".

export type SearchSettings = {
  url: string;
  user?: string | undefined;
  password?: string | undefined;
  ca?: string | undefined;
  indexPrefix: string;
  replicas: number;
  knn: 'auto' | 'off';
  /** Lucene's ef_search for k-NN questions (at least k). */
  efSearch: number;
  timeoutMs: number;
  bulkChunks: number;
  dim: number;
};

/** OpenSearch failed: while a document was written (502, nothing stored) or while a question was ranked. */
export class SearchBackendError extends Error {
  override name = 'SearchBackendError';
  constructor(
    readonly during: 'write' | 'read',
    /** It did not answer at all (down, unreachable, timed out), as opposed to refusing a request. */
    readonly unreachable: boolean,
    message: string,
  ) {
    super(message);
  }
}

export type Search = {
  readonly settings: SearchSettings;
  readonly client: Client;
  /** Whether dense ranking is OpenSearch's k-NN: RAG_SEARCH_KNN auto and the plugin installed (asked once). */
  knn(): Promise<boolean>;
  close(): Promise<void>;
};

export function createSearch(settings: SearchSettings): Search {
  const client = new Client({
    node: settings.url,
    ...(settings.user ? { auth: { username: settings.user, password: settings.password ?? '' } } : {}),
    ...(settings.ca ? { ssl: { ca: settings.ca } } : {}),
    requestTimeout: settings.timeoutMs,
    // one node answering or not: a retry a moment later would answer the same
    maxRetries: 1,
  });
  let knn: Promise<boolean> | undefined;
  return {
    settings,
    client,
    knn() {
      if (settings.knn === 'off') return Promise.resolve(false);
      knn ??= call('read', async () => {
        const { body } = await client.cat.plugins({ format: 'json' });
        return (body as { component: string }[]).some((p) => p.component === 'opensearch-knn');
      }).catch((err: unknown) => {
        knn = undefined; // asked again once OpenSearch answers
        throw err;
      });
      return knn;
    },
    close: () => client.close(),
  };
}

const REMOVE_PAGE = 1000;

/** Runs one request, its failure as a SearchBackendError naming OpenSearch. */
async function call<T>(during: 'write' | 'read', request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    if (err instanceof errors.ResponseError)
      throw new SearchBackendError(during, false, `OpenSearch answered ${err.meta.statusCode}: ${reasonOf(err.meta.body)}`);
    if (err instanceof errors.OpenSearchClientError)
      throw new SearchBackendError(during, true, `OpenSearch did not answer (${err.name}: ${err.message})`);
    throw err;
  }
}

const reasonOf = (body: unknown) =>
  (body as { error?: { reason?: string } } | undefined)?.error?.reason ?? JSON.stringify(body ?? null).slice(0, 300);

/** A new collection's index, named after its slug with a random suffix; answers the name its row keeps. */
export async function createSearchIndex(search: Search, slug: string): Promise<string> {
  const index = `${search.settings.indexPrefix}-${slug}-${randomBytes(4).toString('hex')}`;
  const dim = (await search.knn()) ? search.settings.dim : undefined;
  await call('write', () => search.client.indices.create({ index, body: indexDefinition({ replicas: search.settings.replicas, dim }) }));
  return index;
}

/** Deletes an index no collection names any more. */
export async function dropSearchIndex(search: Search, index: string): Promise<void> {
  await call('write', () => search.client.indices.delete({ index, ignore_unavailable: true }));
}

export function searchBackend(
  deps: MemoryParts & { logger: Logger },
  search: Search,
  collection: { slug: string; version: number; chunk_store: string | null },
): ChunkBackend {
  if (!collection.chunk_store) throw new Error(`search collection ${collection.slug} has no index`);
  const index: string = collection.chunk_store;
  const rows = memoryBackend(deps, collection);
  const { client, settings } = search;

  /** The document's chunks indexed from its rows (their seq read back), then one refresh: it appears whole. */
  async function indexChunks(tx: Sql, document: { id: string; filename: string }, chunks: readonly ChunkInsert[]) {
    if (chunks.length === 0) return;
    const seqs = new Map(
      (
        await tx.query<{ id: string; seq: number }>(
          `SELECT id::text AS id, seq::float8 AS seq FROM retrieval_chunks WHERE document_id = $1`,
          [document.id],
        )
      ).map((r) => [r.id, r.seq]),
    );
    const created = new Date().toISOString();
    const withEmbedding = await search.knn();
    for (let at = 0; at < chunks.length; at += settings.bulkChunks) {
      const body = chunks.slice(at, at + settings.bulkChunks).flatMap((c) => [
        { index: { _index: index, _id: c.id } },
        {
          document_id: document.id,
          filename: document.filename,
          page: c.page,
          ordinal: c.ordinal,
          seq: seqs.get(c.id),
          text: c.text,
          created,
          ...(withEmbedding ? { embedding: Array.from(c.embedding) } : {}),
        },
      ]);
      const { body: answer } = await call('write', () => client.bulk({ body }));
      if (answer.errors) {
        const failed = answer.items.find((item) => Object.values(item)[0]?.error);
        throw new SearchBackendError(
          'write',
          false,
          `OpenSearch refused a chunk: ${JSON.stringify(Object.values(failed ?? {})[0]?.error)}`,
        );
      }
    }
    await call('write', () => client.indices.refresh({ index }));
  }
  /**
   * The document's chunks found by its id and deleted by theirs, a page at a time, then one refresh (delete by query
   * belongs to a module, reindex, that not every OpenSearch distribution carries).
   */
  async function removeDocument(documentId: string) {
    // chunks of a failed upload were never refreshed into view: a search finds them only after a refresh
    await call('write', () => client.indices.refresh({ index }));
    for (let search_after: API.Search_RequestBody['search_after']; ; ) {
      const { body } = await call('write', () =>
        client.search({
          index,
          body: {
            size: REMOVE_PAGE,
            _source: false,
            track_total_hits: false,
            query: { term: { document_id: documentId } },
            sort: [{ seq: { order: 'asc' } }],
            ...(search_after ? { search_after } : {}),
          },
        }),
      );
      const hits = body.hits.hits;
      if (hits.length > 0) await call('write', () => client.bulk({ body: hits.map((h) => ({ delete: { _index: index, _id: h._id } })) }));
      if (hits.length < REMOVE_PAGE) break;
      search_after = hits.at(-1)!.sort;
    }
    await call('write', () => client.indices.refresh({ index }));
  }
  /**
   * The chunks failed uploads left behind (discardChunks), before the collection's next document goes in; in the
   * upload's transaction (an embedded database has one connection).
   */
  async function removeOrphans(tx: Sql) {
    const orphans = await tx.query<{ document_id: string }>(
      `SELECT document_id::text FROM retrieval_search_orphans WHERE chunk_store = $1`,
      [index],
    );
    for (const { document_id } of orphans) {
      await removeDocument(document_id);
      await tx.query(`DELETE FROM retrieval_search_orphans WHERE chunk_store = $1 AND document_id = $2`, [index, document_id]);
    }
  }
  // sorted by score, a hit carries its score as its first sort value
  const ids = (hits: { _id?: string; _score?: number | null; sort?: unknown[] }[], score: (s: number) => number) =>
    hits.map((h) => ({ id: String(h._id), score: score(Number(h._score ?? h.sort?.[0])) }));

  return {
    kind: 'search',
    async writeChunks(tx, document, chunks) {
      await removeOrphans(tx);
      await rows.writeChunks(tx, document, chunks);
      await indexChunks(tx, document, chunks);
    },
    async replaceChunks(tx, document, chunks) {
      await rows.replaceChunks(tx, document, chunks);
      await removeDocument(document.id);
      await indexChunks(tx, document, chunks);
    },
    removeChunks: (_sql, documentId) => removeDocument(documentId),
    async discardChunks(documentId) {
      await removeDocument(documentId).catch(async (err: unknown) => {
        await deps.db.query(`INSERT INTO retrieval_search_orphans (chunk_store, document_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
          index,
          documentId,
        ]);
        deps.logger.warn(
          { err, event: 'retrieval.search_orphans', index, document: documentId },
          'chunks left in OpenSearch until the next write',
        );
      });
    },
    async drop() {
      await rows.drop();
      await dropSearchIndex(search, index);
      await deps.db.query(`DELETE FROM retrieval_search_orphans WHERE chunk_store = $1`, [index]);
    },
    async dense(caller, vector, k, opts) {
      if (!(await search.knn())) return rows.dense(caller, vector, k, opts);
      const { body } = await call('read', () => client.search({ index, body: knnQuery(vector, k, opts.documents, settings.efSearch) }));
      return { hits: ids(body.hits.hits, cosineOf), rows: new Map(), exact: false };
    },
    async keyword(_caller, question, k, { documents }) {
      const { body } = await call('read', () => client.search({ index, body: keywordQuery(question, k, documents) }));
      return ids(body.hits.hits, (s) => s);
    },
    pageChunks: rows.pageChunks,
    chunksByIds: rows.chunksByIds,
  };
}
