import { appendAudit, listRecords } from '../platform/audit/index.ts';
import {
  copyInput,
  copyInt8At,
  int4Field,
  readCopyTuples,
  sqlLiteral,
  textField,
  toVector,
  uuidField,
  type Database,
  type Sql,
} from '../platform/db/index.ts';
import { vectorField, vectorFromBinary } from './vector-wire.ts';

// Every SQL statement of the retrieval service. Functions take the connection (or transaction) first, so the
// same call runs inside or outside a transaction. Lists travel as JSON text (`$n::jsonb`), which both adapters pass
// the same way; chunks, with their embeddings, as binary COPY both ways.

export type CollectionRow = {
  slug: string;
  name: string;
  description: string;
  allowed_roles: string[];
  created_by: string;
  created_at: Date;
  version: number;
  document_count: number;
  chunk_count: number;
  /** The originals kept and the extracted text of its documents. */
  size_bytes: number;
} & CollectionBackend;

/** Where a collection's chunks are (backends/index.ts): the lake's Iceberg table or the search backend's index. */
export type CollectionBackend = { backend: 'memory' | 'lake' | 'search'; chunk_store: string | null };

export type DocumentRow = {
  id: string;
  collection_slug: string;
  filename: string;
  content_type: string;
  format: string;
  size_bytes: number;
  sha256: string;
  page_count: number;
  ocr_pages: number;
  status: string;
  chunk_count: number;
  uploaded_by: string;
  created_at: Date;
  /** Bytes of the extracted text its chunks hold. */
  text_bytes: number;
  /** The kept original's size; null while none is kept (originals.ts). */
  original_bytes: number | null;
};

/** `embedding` holds the values as stored (float32); `code` is their row code (vector-index encodeRow). */
export type ChunkInsert = { id: string; ordinal: number; page: number; text: string; embedding: Float32Array; code: Uint8Array };
export type ChunkHit = { id: string; document_id: string; filename: string; page: number; text: string };

const COLLECTION_COLUMNS = `
  c.slug, c.name, c.description, c.allowed_roles, c.created_by, c.created_at, c.version, c.backend, c.chunk_store,
  (SELECT count(*) FROM retrieval_documents d WHERE d.collection_slug = c.slug)::int AS document_count,
  (CASE WHEN c.backend = 'lake'
    THEN (SELECT coalesce(sum(d.chunk_count), 0) FROM retrieval_documents d WHERE d.collection_slug = c.slug)
    ELSE (SELECT count(*) FROM retrieval_chunks k WHERE k.collection_slug = c.slug) END)::int AS chunk_count,
  (SELECT coalesce(sum(d.text_bytes + coalesce(d.original_bytes, 0)), 0) FROM retrieval_documents d
    WHERE d.collection_slug = c.slug)::bigint AS size_bytes`;

export async function insertCollection(
  sql: Sql,
  c: { slug: string; name: string; description: string; allowed_roles: string[]; created_by: string } & CollectionBackend,
): Promise<boolean> {
  const rows = await sql.query(
    `INSERT INTO retrieval_collections (slug, name, description, allowed_roles, created_by, backend, chunk_store)
     VALUES ($1, $2, $3, ARRAY(SELECT jsonb_array_elements_text($4::jsonb)), $5, $6, $7)
     ON CONFLICT (slug) DO NOTHING RETURNING slug`,
    [c.slug, c.name, c.description, JSON.stringify(c.allowed_roles), c.created_by, c.backend, c.chunk_store],
  );
  return rows.length === 1;
}

export async function listCollections(sql: Sql): Promise<CollectionRow[]> {
  return sql.query<CollectionRow>(`SELECT ${COLLECTION_COLUMNS} FROM retrieval_collections c ORDER BY c.slug`);
}

export async function findCollection(sql: Sql, slug: string): Promise<CollectionRow | undefined> {
  const rows = await sql.query<CollectionRow>(`SELECT ${COLLECTION_COLUMNS} FROM retrieval_collections c WHERE c.slug = $1`, [slug]);
  return rows[0];
}

/** Cascades to documents and chunks through the foreign keys. */
export async function deleteCollection(sql: Sql, slug: string): Promise<boolean> {
  const rows = await sql.query(`DELETE FROM retrieval_collections WHERE slug = $1 RETURNING slug`, [slug]);
  return rows.length === 1;
}

export type CollectionHead = { slug: string; allowed_roles: string[]; version: number } & CollectionBackend;

/** What a query needs of its collection, without counting anything: one primary-key read. */
export async function collectionHead(sql: Sql, slug: string): Promise<CollectionHead | undefined> {
  const rows = await sql.query<CollectionHead>(
    `SELECT slug, allowed_roles, version, backend, chunk_store FROM retrieval_collections WHERE slug = $1`,
    [slug],
  );
  return rows[0];
}

export async function chunkCount(sql: Sql, slug: string): Promise<number> {
  const rows = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM retrieval_chunks WHERE collection_slug = $1`, [slug]);
  return rows[0]!.n;
}

export async function collectionVersion(sql: Sql, slug: string): Promise<number | undefined> {
  const rows = await sql.query<{ version: number }>(`SELECT version FROM retrieval_collections WHERE slug = $1`, [slug]);
  return rows[0]?.version;
}

/** A collection's next version: one sequence across collections, so a version is never taken twice. */
const BUMP_VERSION = `UPDATE retrieval_collections SET version = nextval('retrieval_collection_versions')`;

/** Moves the collection to a new version (a document's insert can bump it as part of that statement). */
export async function bumpCollectionVersion(sql: Sql, slug: string): Promise<void> {
  await sql.query(`${BUMP_VERSION} WHERE slug = $1`, [slug]);
}

/**
 * Inserts the document, and bumps the collection's version when `bump` says so, in one statement, unless the
 * collection already holds a document with the same content (sha256): undefined then, and nothing is written. The
 * unique index decides, so of two concurrent uploads of one file exactly one inserts; on Postgres the other waits for
 * the first to commit (or roll back) before it is told. The caller writes the chunks (copyChunks) in the same
 * transaction.
 */
export async function insertDocument(
  sql: Sql,
  d: Omit<DocumentRow, 'created_at'>,
  opts: { bump: boolean; pages?: readonly { page: number; text: string }[] },
): Promise<DocumentRow | undefined> {
  // the pages as extracted go in with the row, in the same statement (a round trip fewer), and only if it went in
  const rows = await sql.query<DocumentRow>(
    `WITH document AS (
       INSERT INTO retrieval_documents
         (id, collection_slug, filename, content_type, format, size_bytes, sha256, page_count, ocr_pages, status, chunk_count, uploaded_by, text_bytes, original_bytes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $14, $16)
       ON CONFLICT (collection_slug, sha256) DO NOTHING RETURNING *
     ), bump AS (
       ${BUMP_VERSION} WHERE slug = $2 AND $13::boolean AND EXISTS (SELECT 1 FROM document)
     ), pages AS (
       INSERT INTO retrieval_document_pages (document_id, page, text)
       SELECT document.id, (p->>'page')::int, p->>'text' FROM document, jsonb_array_elements($15::jsonb) AS p
     )
     SELECT * FROM document`,
    [
      d.id,
      d.collection_slug,
      d.filename,
      d.content_type,
      d.format,
      d.size_bytes,
      d.sha256,
      d.page_count,
      d.ocr_pages,
      d.status,
      d.chunk_count,
      d.uploaded_by,
      opts.bump,
      d.text_bytes,
      JSON.stringify((opts.pages ?? []).map((p) => ({ page: p.page, text: p.text }))),
      d.original_bytes,
    ],
  );
  return rows[0];
}

/**
 * Writes a document's chunks with one binary COPY, whatever their number: the embeddings travel as pgvector's own
 * binary form and the row codes as bytes, so neither side builds or parses text (that text was most of a write).
 */
export async function copyChunks(sql: Sql, slug: string, documentId: string, chunks: readonly ChunkInsert[]): Promise<void> {
  const document = uuidField(documentId);
  const collection = textField(slug);
  await sql.copyIn(
    'retrieval_chunks (id, document_id, collection_slug, ordinal, page, text, embedding, embedding_i8)',
    copyInput(
      (function* () {
        for (const c of chunks)
          yield [
            uuidField(c.id),
            document,
            collection,
            int4Field(c.ordinal),
            int4Field(c.page),
            textField(c.text),
            vectorField(c.embedding),
            c.code,
          ];
      })(),
    ),
  );
}

export async function findDocumentByContent(sql: Sql, slug: string, sha256: string): Promise<DocumentRow | undefined> {
  const rows = await sql.query<DocumentRow>(`SELECT * FROM retrieval_documents WHERE collection_slug = $1 AND sha256 = $2`, [slug, sha256]);
  return rows[0];
}

export async function listDocuments(sql: Sql, slug: string): Promise<DocumentRow[]> {
  return sql.query<DocumentRow>(`SELECT * FROM retrieval_documents WHERE collection_slug = $1 ORDER BY created_at, id`, [slug]);
}

/** A chunk as the in-memory copy loads it: its code, or for a chunk stored without one its vector. */
export type StoredRow = { seq: number; code: Uint8Array | null; vector: Float32Array | null };
export type ChunkTotals = { total: number; seqSum: number };

const STORED_ROW = `seq, embedding_i8, CASE WHEN embedding_i8 IS NULL THEN vector_send(embedding) END AS embedding`;

/**
 * How a copy's read is planned: in the order of the (collection_slug, seq) index, never sorted, and without JIT. The
 * planner prices the index scan by the heap's order across collections and picks a scan and a sort of every row
 * instead, which spills 80 MB to disk at 100 000 chunks (0.3 to 0.5 s against 0.08 s for the index scan, measured on
 * 11-29); and JIT compiled a plain scan for 25 ms.
 */
const COPY_PLAN = { settings: { enable_sort: 'off', jit: 'off' } };

/**
 * Rows as a piece of a copy's read holds them: row i's sequence number seqs[i] and its code, bytes[codeAt[i],
 * codeAt[i] + codeLength[i]); where codeAt[i] is -1, a chunk stored without a code, rowOf(i) carries its vector. Valid
 * only during the call that hands them over.
 */
export type StoredRows = {
  readonly count: number;
  readonly seqs: Float64Array;
  readonly bytes: Uint8Array;
  readonly codeAt: Int32Array;
  readonly codeLength: Int32Array;
  /** Row i as one object, its vector decoded where it has no code. */
  rowOf(i: number): StoredRow;
};

/**
 * Streams the collection's chunks in sequence order to `onRow`, at most `limit` of them (its byte arrays are only
 * valid during the call), and answers how many it read and the sum of their sequence numbers: with fewer than
 * `limit` rows, the whole collection from one snapshot, which an in-memory copy is built from. Binary COPY, 780
 * bytes a row at 768 dimensions and no text on either side: a collection at the speed the server reads it.
 * `onCount`, when given, is told about how many rows to expect (at most `limit`) before or while they arrive, so the
 * copy can take its memory once: the documents' chunk counts, read beside the COPY, so only a size to reserve.
 */
export async function readAllCodes(
  db: Database,
  slug: string,
  limit: number,
  onRow: (row: StoredRow) => void,
  onCount?: (rows: number) => void,
): Promise<ChunkTotals> {
  return readCodeBlocks(
    db,
    slug,
    limit,
    (rows) => {
      for (let i = 0; i < rows.count; i++) onRow(rows.rowOf(i));
    },
    onCount,
  );
}

/**
 * readAllCodes, handing the rows over as each piece of the COPY holds them (StoredRows): no object made per row, so
 * a copy appends a piece's codes at once (indexes.ts).
 */
export async function readCodeBlocks(
  db: Database,
  slug: string,
  limit: number,
  onRows: (rows: StoredRows) => void,
  onCount?: (rows: number) => void,
): Promise<ChunkTotals> {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`limit must be a whole number, got ${limit}`);
  const totals: ChunkTotals = { total: 0, seqSum: 0 };
  // the documents' chunk counts (a row a document), answered while the COPY's own connection opens: a copy grown row
  // by row doubles a dozen times, each growth of its memory prompting a collection of the JS heap (25 to 50 ms of a
  // 100 000-row load). Counting the chunks themselves read every index entry on the server beside the COPY, and
  // answered after its first rows (70 to 180 ms at 100 000, measured on 11-29)
  const counted = onCount
    ? db
        .query<{ n: number }>(`SELECT coalesce(sum(chunk_count), 0)::float8 AS n FROM retrieval_documents WHERE collection_slug = $1`, [
          slug,
        ])
        .then(([counted]) => onCount(Math.min(counted!.n, limit)))
        .catch(() => undefined) // a size hint only: the read itself reports what fails
    : undefined;
  let seqs = new Float64Array(256);
  let codeAt = new Int32Array(256);
  let codeLength = new Int32Array(256);
  await readCopyTuples(
    db,
    `SELECT ${STORED_ROW} FROM retrieval_chunks WHERE collection_slug = ${sqlLiteral(slug)} ORDER BY seq LIMIT ${limit}`,
    ({ bytes, count, fields, at, length }) => {
      if (fields !== 3) throw new Error(`a copy's row has ${fields} fields, not 3`);
      if (count > seqs.length) {
        seqs = new Float64Array(2 * count);
        codeAt = new Int32Array(2 * count);
        codeLength = new Int32Array(2 * count);
      }
      for (let i = 0; i < count; i++) {
        const seq = copyInt8At(bytes, at[3 * i]!);
        seqs[i] = seq;
        totals.seqSum += seq;
        const code = length[3 * i + 1]!;
        codeAt[i] = code === -1 ? -1 : at[3 * i + 1]!;
        codeLength[i] = code;
      }
      totals.total += count;
      const rowOf = (i: number): StoredRow => {
        const n = length[3 * i + 2]!;
        return {
          seq: seqs[i]!,
          code: codeAt[i]! < 0 ? null : bytes.subarray(codeAt[i]!, codeAt[i]! + codeLength[i]!),
          vector: n === -1 ? null : vectorFromBinary(bytes.subarray(at[3 * i + 2]!, at[3 * i + 2]! + n)),
        };
      };
      onRows({ count, seqs, bytes, codeAt, codeLength, rowOf });
    },
    COPY_PLAN,
  );
  await counted;
  return totals;
}

/**
 * The collection's chunk count and sum of sequence numbers, with the chunks after `afterSeq` in sequence order,
 * from one snapshot: what a copy catching up needs to prove that nothing else changed. One ordinary statement: a
 * catch-up reads a few uploads' rows, for which the pool is cheaper than the connection of its own a COPY takes.
 */
export async function readCodesAfter(sql: Sql, slug: string, afterSeq: number): Promise<ChunkTotals & { rows: StoredRow[] }> {
  const found = await sql.query<{
    total: number;
    seq_sum: number;
    seq: number | null;
    embedding_i8: Uint8Array | null;
    embedding: Uint8Array | null;
  }>(
    `WITH totals AS (
       SELECT count(*)::int AS total, coalesce(sum(seq), 0)::float8 AS seq_sum FROM retrieval_chunks WHERE collection_slug = $1)
     SELECT t.total, t.seq_sum, c.seq, c.embedding_i8, c.embedding
     FROM totals t LEFT JOIN LATERAL (
       SELECT ${STORED_ROW} FROM retrieval_chunks WHERE collection_slug = $1 AND seq > $2 ORDER BY seq) c ON true`,
    [slug, afterSeq],
  );
  const first = found[0]!;
  return {
    total: first.total,
    seqSum: first.seq_sum,
    rows: found.flatMap((r) =>
      r.seq === null ? [] : [{ seq: r.seq, code: r.embedding_i8, vector: r.embedding && vectorFromBinary(r.embedding) }],
    ),
  };
}

/** Rows a statement of vectorsBySeq reads at least, and statements it sends at once at most. */
const VECTORS_A_STATEMENT = 8;
const VECTOR_STATEMENTS = 3;

/**
 * The ids and stored vectors of the chunks of `seqs`: what ranking needs, without the text it does not. Many rows are
 * read by a few statements at once: each row's vector is out of line (TOAST), three or so pages read one after
 * another by the server, from disk for a large collection's rows not read lately (27 rows of a million: 15 to 19 ms
 * in one statement, 10.6 to 11.6 in three, measured on 11-29 at load 9 to 11).
 */
export async function vectorsBySeq(sql: Sql, slug: string, seqs: number[]): Promise<{ seq: number; id: string; vector: Float32Array }[]> {
  const statements = Math.min(VECTOR_STATEMENTS, Math.floor(seqs.length / VECTORS_A_STATEMENT));
  if (statements < 2) return vectorsOf(sql, slug, seqs);
  const size = Math.ceil(seqs.length / statements);
  const pieces = Array.from({ length: statements }, (_, i) => seqs.slice(i * size, (i + 1) * size));
  return (await Promise.all(pieces.map((piece) => vectorsOf(sql, slug, piece)))).flat();
}

async function vectorsOf(sql: Sql, slug: string, seqs: number[]): Promise<{ seq: number; id: string; vector: Float32Array }[]> {
  const rows = await sql.query<{ seq: number; id: string; embedding: Uint8Array }>(
    `SELECT k.seq, k.id::text AS id, vector_send(k.embedding) AS embedding
     FROM retrieval_chunks k WHERE k.collection_slug = $1 AND k.seq = ANY($2::bigint[])`,
    [slug, seqs],
  );
  return rows.map(({ embedding, ...row }) => ({ ...row, vector: vectorFromBinary(embedding) }));
}

/**
 * Every stored vector of the collection's chunks up to `throughSeq`, in sequence order, from one binary COPY (as a
 * copy's load reads the codes): `onRow` gets each one decoded into the same Float32Array, valid only during the call,
 * so a read of every row makes no object a row (a clustered copy's finer code, indexes.ts); with it the chunk's id as
 * its 16 bytes, likewise valid only during the call. Throwing from `onRow` stops the read and rejects with that error.
 */
export async function readVectors(
  db: Database,
  slug: string,
  dim: number,
  throughSeq: number,
  onRow: (seq: number, vector: Float32Array, id: Uint8Array) => void,
): Promise<number> {
  const vector = new Float32Array(dim);
  return readCopyTuples(
    db,
    `SELECT seq, vector_send(embedding), id FROM retrieval_chunks
     WHERE collection_slug = ${sqlLiteral(slug)} AND seq <= ${Math.floor(throughSeq)} ORDER BY seq`,
    ({ bytes, count, fields, at, length }) => {
      if (fields !== 3) throw new Error(`a vector's row has ${fields} fields, not 3`);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let i = 0; i < count; i++) {
        const from = at[3 * i + 1]!;
        if (length[3 * i + 1] !== 4 + 4 * dim || view.getInt16(from) !== dim)
          throw new Error(`a stored vector does not have ${dim} dimensions`);
        if (length[3 * i + 2] !== 16) throw new Error(`a chunk id of ${length[3 * i + 2]} bytes is not a uuid`);
        for (let d = 0; d < dim; d++) vector[d] = view.getFloat32(from + 4 + 4 * d);
        onRow(copyInt8At(bytes, at[3 * i]!), vector, bytes.subarray(at[3 * i + 2]!, at[3 * i + 2]! + 16));
      }
    },
    COPY_PLAN,
  );
}

/** The vectors of the chunks after `afterSeq` up to `throughSeq`, in sequence order, at most `limit`: a copy's warm-up. */
export async function vectorsInRange(
  sql: Sql,
  slug: string,
  afterSeq: number,
  throughSeq: number,
  limit: number,
): Promise<{ seq: number; id: string; vector: Float32Array }[]> {
  const rows = await sql.query<{ seq: number; id: string; embedding: Uint8Array }>(
    `SELECT k.seq, k.id::text AS id, vector_send(k.embedding) AS embedding
     FROM retrieval_chunks k WHERE k.collection_slug = $1 AND k.seq > $2 AND k.seq <= $3 ORDER BY k.seq LIMIT $4`,
    [slug, afterSeq, throughSeq, limit],
  );
  return rows.map(({ embedding, ...row }) => ({ ...row, vector: vectorFromBinary(embedding) }));
}

export async function chunksByIds(sql: Sql, ids: string[]): Promise<ChunkHit[]> {
  return sql.query<ChunkHit>(
    `SELECT k.id::text AS id, k.document_id::text AS document_id, d.filename, k.page, k.text
     FROM retrieval_chunks k JOIN retrieval_documents d ON d.id = k.document_id
     WHERE k.id = ANY(ARRAY(SELECT jsonb_array_elements_text($1::jsonb))::uuid[])`,
    [JSON.stringify(ids)],
  );
}

/** pgvector's own exact ranking; used above the in-memory index's size limit. */
export async function rankByPgvector(sql: Sql, slug: string, query: number[], k: number): Promise<(ChunkHit & { score: number })[]> {
  return sql.query(
    `SELECT k.id::text AS id, k.document_id::text AS document_id, d.filename, k.page, k.text,
            1 - (k.embedding <=> $2::vector) AS score
     FROM retrieval_chunks k JOIN retrieval_documents d ON d.id = k.document_id
     WHERE k.collection_slug = $1
     ORDER BY k.embedding <=> $2::vector, k.seq
     LIMIT $3`,
    [slug, `[${query.join(',')}]`, k],
  );
}

export type AuditRecord = {
  id: number;
  at: Date;
  user_id: string;
  roles: string[];
  collection: string;
  question: string;
  top_k: number;
  chunk_ids: string[];
  scores: number[];
  latency_ms: number;
  /** The query's filter, when it had one (the fields given). */
  filter?: { document_ids?: string[]; formats?: string[]; uploaded_after?: string; uploaded_before?: string };
  /** Present when the retrieval was for an answer (POST /collections/{slug}/answer). */
  answer?: AnswerRecord;
};

/** What an answer gave (or why it gave none): `outcome` answered, no_context, model_failed or cancelled. */
export type AnswerRecord = {
  outcome: 'answered' | 'no_context' | 'model_failed' | 'cancelled';
  model: string;
  text: string | null;
  citations: { marker: number; chunk_id: string }[];
  session_id: string | null;
  standalone_question?: string;
  error?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
};

// A retrieval's audit record is a record of the platform's audit chain (src/platform/audit): its id is its seq.
/** Returns the record's id (its seq in the chain). */
export async function insertAudit(sql: Sql, a: Omit<AuditRecord, 'id' | 'at'>): Promise<number> {
  const { user_id, ...detail } = a;
  return (await appendAudit(sql, { service: 'retrieval', action: 'query', actor: user_id, detail })).seq;
}

export async function listAudit(sql: Sql, opts: { limit: number; user?: string }): Promise<AuditRecord[]> {
  const records = await listRecords(sql, { service: 'retrieval', action: 'query', actor: opts.user, limit: opts.limit });
  return records.map((r) => ({ ...(r.detail as Omit<AuditRecord, 'id' | 'at' | 'user_id'>), id: r.seq, at: r.at, user_id: r.actor }));
}
