import { quoteIdent, quoteLiteral } from '../../src/platform/trino/index.ts';
import type { RetrievalHarness } from './retrieval.ts';

// What a collection's chunk store holds, read behind the service's back wherever its backend keeps it: rows of
// `retrieval_chunks` in Postgres (the memory and search backends) or the collection's Iceberg table (the lake), read
// as the service through the harness's own Trino connection. The contracts use it for facts the HTTP answers do not
// show (the engine's own exact ranking, that a delete left no chunk behind), so each holds on every backend.

/** Where one collection's chunks are: found before a delete, so the store can still be counted after it. */
export type ChunkStore = { slug: string; backend: string; table: string | null };

export async function chunkStoreOf(h: RetrievalHarness, slug: string): Promise<ChunkStore> {
  const [row] = await h.db.query<{ backend: string; chunk_store: string | null }>(
    `SELECT backend, chunk_store FROM retrieval_collections WHERE slug = $1`,
    [slug],
  );
  if (!row) throw new Error(`no collection ${slug}`);
  return { slug, backend: row.backend, table: row.chunk_store };
}

/** The chunks the store holds for the collection; 0 for a lake table that is gone. */
export async function storedChunkCount(h: RetrievalHarness, store: ChunkStore): Promise<number> {
  if (store.backend !== 'lake') {
    const [row] = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM retrieval_chunks WHERE collection_slug = $1`, [
      store.slug,
    ]);
    return row!.n;
  }
  if (!(await lakeTableExists(h, store.table!))) return 0;
  return Number((await lake(h).asService(`SELECT count(*) FROM ${lakeTable(h, store.table!)}`)).rows[0]![0]);
}

/**
 * The collection's chunks, and how many of them carry what their backend ranks by: in Postgres the row code the
 * in-memory copy loads (embedding_i8), on the lake an embedding of the service's dimension.
 */
export async function storedChunks(h: RetrievalHarness, slug: string): Promise<{ chunks: number; codes: number }> {
  const store = await chunkStoreOf(h, slug);
  if (store.backend !== 'lake') {
    const [row] = await h.db.query<{ chunks: number; codes: number }>(
      `SELECT count(*)::int AS chunks, count(embedding_i8)::int AS codes FROM retrieval_chunks WHERE collection_slug = $1`,
      [slug],
    );
    return row!;
  }
  const dim = h.deps.config.EMBED_DIM;
  const { rows } = await lake(h).asService(
    `SELECT count(*), count_if(cardinality(embedding) = ${Number(dim)}) FROM ${lakeTable(h, store.table!)}`,
  );
  return { chunks: Number(rows[0]![0]), codes: Number(rows[0]![1]) };
}

/**
 * The ids of the `k` chunks nearest `vector` by cosine distance, ties in insertion order, as the engine holding them
 * ranks them when asked directly: pgvector over the Postgres rows, Trino's cosine_distance over the lake table.
 */
export async function exactDenseIds(h: RetrievalHarness, slug: string, vector: readonly number[], k: number): Promise<string[]> {
  const store = await chunkStoreOf(h, slug);
  if (store.backend !== 'lake') {
    const rows = await h.db.query<{ id: string }>(
      `SELECT id::text AS id FROM retrieval_chunks WHERE collection_slug = $1 ORDER BY embedding <=> $2::vector, seq LIMIT ${Number(k)}`,
      [slug, `[${vector.join(',')}]`],
    );
    return rows.map((r) => r.id);
  }
  const question = `ARRAY[${vector.map((x) => `DOUBLE '${Number(x)}'`).join(', ')}]`;
  const { rows } = await lake(h).asService(
    `SELECT chunk_id FROM ${lakeTable(h, store.table!)} ` +
      `ORDER BY cosine_distance(CAST(embedding AS array(double)), ${question}), seq LIMIT ${Number(k)}`,
  );
  return rows.map((r) => String(r[0]));
}

function lake(h: RetrievalHarness) {
  if (!h.deps.lake) throw new Error('a lake collection, but the harness has no Trino (SVC_TRINO_URL)');
  return h.deps.lake;
}

const schemaOf = (h: RetrievalHarness) => lake(h).settings.schema.split('.') as [string, string];
const lakeTable = (h: RetrievalHarness, table: string) => [...schemaOf(h), table].map(quoteIdent).join('.');

async function lakeTableExists(h: RetrievalHarness, table: string): Promise<boolean> {
  const [catalog, schema] = schemaOf(h);
  const { rows } = await lake(h).asService(
    `SELECT count(*) FROM ${quoteIdent(catalog)}.information_schema.tables ` +
      `WHERE table_schema = ${quoteLiteral(schema)} AND table_name = ${quoteLiteral(table)}`,
  );
  return Number(rows[0]![0]) > 0;
}
