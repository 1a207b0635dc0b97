import { randomBytes } from 'node:crypto';
import type { Sql } from '../../platform/db/index.ts';
import type { Caller } from '../../platform/identity.ts';
import {
  callerIdentity,
  runStatement,
  serviceIdentity,
  TrinoError,
  type TrinoConnection,
  type TrinoResult,
} from '../../platform/trino/index.ts';
import { createKeywordIndexes, type KeywordIndexes, type TextSource } from '../keyword-index/index.ts';
import type { ChunkHit, ChunkInsert } from '../store.ts';
import { rankByKeywordCopy } from './keyword-copy.ts';
import * as sql from './lake-sql.ts';
import type { ChunkBackend } from './types.ts';

// The lake backend: a collection's chunks in an Iceberg table of their own, written through Trino as the service
// user (SVC_TRINO_SERVICE_USER) and ranked by Trino as the caller, with the caller's own token, so Trino's rules
// can narrow what svc's policy allowed. Keyword ranking is svc's own BM25 copy, built from the table's texts read as
// the service, so the three modes fuse as on the memory backend. docs/retrieval.md, "Backends".

export type LakeSettings = {
  connection: TrinoConnection;
  serviceUser: string;
  serviceToken?: string | undefined;
  /** `catalog.schema` of the collections' tables. */
  schema: string;
  timeoutMs: number;
  /** Chunks one INSERT carries. */
  insertChunks: number;
  /** Chunks a keyword copy may hold (SVC_RAG_KEYWORD_INDEX_MAX_CHUNKS). */
  keywordMaxChunks: number;
  /** The S3 connection to the tables' bucket, where imports write Parquet files (SVC_RAG_LAKE_S3_ENDPOINT_URL). */
  objects: { endpoint?: string; region?: string; accessKeyId?: string; secretAccessKey?: string };
};

export type Lake = {
  readonly settings: LakeSettings;
  asService(statement: string): Promise<TrinoResult>;
  asCaller(caller: Caller, statement: string): Promise<TrinoResult>;
  /** Creates the schema once per process (CREATE SCHEMA IF NOT EXISTS), before the first table. */
  ensureSchema(): Promise<void>;
  /** The BM25 copies of lake collections, keyed by slug like the memory backend's. */
  keywords: KeywordIndexes;
};

export function createLake(settings: LakeSettings): Lake {
  const asService = async (statement: string) => {
    const who = serviceIdentity(settings, 'write the lake');
    try {
      return await runStatement(settings.connection, statement, who, { timeoutMs: settings.timeoutMs });
    } catch (err) {
      // the caller did nothing wrong when the service's own credentials or rights are refused
      if (err instanceof TrinoError && (err.kind === 'unauthenticated' || err.kind === 'forbidden'))
        throw new TrinoError(
          'unavailable',
          `Trino refused the service user ${settings.serviceUser} (SVC_TRINO_SERVICE_USER, SVC_TRINO_SERVICE_TOKEN): ${err.message}`,
          err.errorName,
        );
      throw err;
    }
  };
  let schema: Promise<unknown> | undefined;
  const texts: TextSource = {
    // the count from the documents' rows (no statement on Trino): a copy too large is refused before it is read
    async chunkCount(db, slug) {
      const [row] = await db.query<{ n: number }>(
        `SELECT coalesce(sum(chunk_count), 0)::int AS n FROM retrieval_documents WHERE collection_slug = $1`,
        [slug],
      );
      return row?.n ?? 0;
    },
    async textsAfter(db, slug, afterSeq) {
      const table = await tableOfSlug(db, slug);
      const { rows } = await asService(sql.textsAfter(sql.tableOf(settings.schema, table), afterSeq));
      const first = rows[0] ?? [0, 0];
      return {
        total: Number(first[0]),
        seqSum: Number(first[1]),
        rows: rows.filter((r) => r[2] !== null).map((r) => ({ seq: Number(r[2]), id: String(r[3]), text: String(r[4]) })),
      };
    },
  };
  return {
    settings,
    asService,
    async asCaller(caller, statement) {
      try {
        return await runStatement(settings.connection, statement, callerIdentity(caller), { timeoutMs: settings.timeoutMs });
      } catch (err) {
        if (err instanceof TrinoError && err.kind === 'forbidden')
          throw new TrinoError(
            'forbidden',
            `Trino refused to read the lake as ${caller.user} (svc's policy allows the query; Trino's own rules do not): ${err.message}`,
            err.errorName,
          );
        throw err;
      }
    },
    ensureSchema() {
      schema ??= asService(sql.createSchema(settings.schema)).catch((err: unknown) => {
        schema = undefined; // tried again by the next collection
        throw err;
      });
      return schema.then(() => undefined);
    },
    keywords: createKeywordIndexes(settings.keywordMaxChunks, texts),
  };
}

async function tableOfSlug(db: Sql, slug: string): Promise<string> {
  const [row] = await db.query<{ chunk_store: string | null }>(`SELECT chunk_store FROM retrieval_collections WHERE slug = $1`, [slug]);
  if (!row?.chunk_store) throw new Error(`collection ${slug} has no lake table`);
  return row.chunk_store;
}

/**
 * A new collection's table, named after its slug with a random suffix (two deployments sharing the catalog, or a
 * collection deleted and created again, never meet in one table). Answers the name the collection's row keeps.
 */
export async function createLakeTable(lake: Lake, slug: string): Promise<string> {
  const table = `${slug.replaceAll('-', '_')}_${randomBytes(4).toString('hex')}`;
  await lake.ensureSchema();
  await lake.asService(sql.createTable(sql.tableOf(lake.settings.schema, table)));
  return table;
}

/** Drops a table that no collection row names (a create that lost its slug to another). Best effort. */
export async function dropLakeTable(lake: Lake, table: string): Promise<void> {
  await lake.asService(sql.dropTable(sql.tableOf(lake.settings.schema, table)));
}

export function lakeBackend(
  deps: { db: Sql },
  lake: Lake,
  collection: { slug: string; version: number; chunk_store: string | null },
): ChunkBackend {
  const { slug, version } = collection;
  if (!collection.chunk_store) throw new Error(`lake collection ${slug} has no table`);
  const fqn = sql.tableOf(lake.settings.schema, collection.chunk_store);
  const hitOf = (r: unknown[]): ChunkHit => ({
    id: String(r[0]),
    document_id: String(r[1]),
    filename: String(r[2]),
    page: Number(r[3]),
    text: String(r[4]),
  });

  async function write(tx: Sql, document: { id: string; filename: string }, chunks: readonly ChunkInsert[]) {
    if (chunks.length === 0) return;
    const seqs = await nextSeqs(tx, chunks.length);
    const rows = chunks.map((c, i) => ({ ...c, seq: seqs[i]! }));
    // one INSERT (one snapshot) a batch: a document of at most SVC_RAG_LAKE_INSERT_CHUNKS chunks appears whole
    for (let at = 0; at < rows.length; at += lake.settings.insertChunks)
      await lake.asService(sql.insertChunks(fqn, document, rows.slice(at, at + lake.settings.insertChunks)));
  }

  return {
    kind: 'lake',
    writeChunks: write,
    async replaceChunks(tx, document, chunks) {
      await lake.asService(sql.deleteDocument(fqn, document.id));
      await write(tx, document, chunks);
    },
    async removeChunks(_sql, documentId) {
      await lake.asService(sql.deleteDocument(fqn, documentId));
    },
    // a Trino that cannot delete them now leaves them (docs/retrieval.md, "Backends")
    discardChunks: (documentId) =>
      lake.asService(sql.deleteDocument(fqn, documentId)).then(
        () => undefined,
        () => undefined,
      ),
    async drop() {
      lake.keywords.drop(slug);
      await lake.asService(sql.dropTable(fqn));
    },
    async dense(caller, vector, k, { documents }) {
      const { rows } = await lake.asCaller(caller, sql.rankDense(fqn, vector, k, documents));
      const hits = rows.map((r) => ({ ...hitOf(r), score: 1 - Number(r[5]) }));
      return { hits: hits.map((h) => ({ id: h.id, score: h.score })), rows: new Map(hits.map((h) => [h.id, h])), exact: true };
    },
    keyword: async (caller, question, k, { documents }) =>
      rankByKeywordCopy(await lake.keywords.get(deps.db, slug, version), question, k, documents, async (ids) => {
        if (ids.length === 0) return new Set();
        const { rows } = await lake.asCaller(caller, sql.chunkIdsOfDocuments(fqn, ids));
        return new Set(rows.map((r) => String(r[0])));
      }),
    async pageChunks(caller, documentId, page) {
      const { rows } = await lake.asCaller(caller, sql.pageChunks(fqn, documentId, page));
      return rows.map((r) => ({ chunk_id: String(r[0]), text: String(r[1]) }));
    },
    async chunksByIds(caller, ids) {
      if (ids.length === 0) return [];
      return (await lake.asCaller(caller, sql.chunksByIds(fqn, ids))).rows.map(hitOf);
    },
  };
}

/**
 * Sequence numbers for new chunks from the memory backend's own sequence: ascending in insertion order, so a tie
 * in score is broken as that backend breaks it.
 */
export async function nextSeqs(tx: Sql, n: number): Promise<number[]> {
  const rows = await tx.query<{ seq: number }>(
    `SELECT nextval(pg_get_serial_sequence('retrieval_chunks', 'seq'))::float8 AS seq FROM generate_series(1, $1::int)`,
    [n],
  );
  return rows.map((r) => r.seq).sort((a, b) => a - b);
}
