import { quoteIdent, quoteLiteral } from '../../platform/trino/index.ts';

// The statements of a lake collection, one Iceberg table per collection (docs/retrieval.md, "Backends"). Values
// travel as literals: Trino's client protocol has no parameters, so everything is quoted here and nowhere else.

/** The table's columns; `seq` is the chunk's place in the collection's insertion order (the memory backend's tie-break). */
const COLUMNS = `chunk_id varchar, document_id varchar, file_name varchar, page integer, chunk_index integer, text varchar,
  embedding array(real), created timestamp(6) with time zone, seq bigint`;

/** `catalog.schema` and the collection's table name, quoted. */
export const tableOf = (schema: string, table: string) => `${schema.split('.').map(quoteIdent).join('.')}.${quoteIdent(table)}`;

export const createSchema = (schema: string) => `CREATE SCHEMA IF NOT EXISTS ${schema.split('.').map(quoteIdent).join('.')}`;
export const createTable = (fqn: string) => `CREATE TABLE IF NOT EXISTS ${fqn} (${COLUMNS})`;
export const dropTable = (fqn: string) => `DROP TABLE IF EXISTS ${fqn}`;

export type LakeChunk = {
  id: string;
  seq: number;
  ordinal: number;
  page: number;
  text: string;
  /** As the memory backend stores it: float32 values. */
  embedding: Float32Array;
};

/** One INSERT for these chunks of one document: one Iceberg snapshot, so they are visible together or not at all. */
export function insertChunks(fqn: string, document: { id: string; filename: string }, chunks: readonly LakeChunk[]): string {
  const doc = quoteLiteral(document.id);
  const file = quoteLiteral(document.filename);
  const rows = chunks.map(
    (c) =>
      `(${quoteLiteral(c.id)}, ${doc}, ${file}, ${int(c.page)}, ${int(c.ordinal)}, ${quoteLiteral(c.text)}, ` +
      `CAST(json_parse('${floatsJson(c.embedding)}') AS array(real)), current_timestamp, BIGINT '${int(c.seq)}')`,
  );
  return `INSERT INTO ${fqn} (chunk_id, document_id, file_name, page, chunk_index, text, embedding, created, seq) VALUES\n${rows.join(',\n')}`;
}

/** A row-level delete: Iceberg writes a position-delete file, one snapshot. */
export const deleteDocument = (fqn: string, documentId: string) => `DELETE FROM ${fqn} WHERE document_id = ${quoteLiteral(documentId)}`;

/**
 * The k nearest chunks by cosine distance, exact (a full scan), ties in insertion order as the memory backend breaks
 * them. A zero question vector has no direction (Trino refuses it: "Vector magnitude cannot be zero"); the memory
 * backend scores it 0 everywhere and answers the first chunks, and so does this.
 */
export function rankDense(fqn: string, query: readonly number[], k: number, documents?: readonly string[]): string {
  const where = documents ? `WHERE document_id IN (${documents.map(quoteLiteral).join(', ')})` : '';
  const zero = query.every((x) => x === 0);
  const distance = zero
    ? 'DOUBLE 1'
    : `cosine_distance(embedding, CAST(json_parse('${JSON.stringify(query.map(Number))}') AS array(double)))`;
  return `SELECT chunk_id, document_id, file_name, page, text, ${distance} AS d FROM ${fqn} ${where} ORDER BY d, seq LIMIT ${int(k)}`;
}

/** The chunks with these ids (what a fused ranking's winners need), as the caller: Trino's rules still apply. */
export const chunksByIds = (fqn: string, ids: readonly string[]) =>
  `SELECT chunk_id, document_id, file_name, page, text FROM ${fqn} WHERE chunk_id IN (${ids.map(quoteLiteral).join(', ')})`;

export const pageChunks = (fqn: string, documentId: string, page: number) =>
  `SELECT chunk_id, text FROM ${fqn} WHERE document_id = ${quoteLiteral(documentId)} AND page = ${int(page)} ORDER BY chunk_index`;

export const chunkIdsOfDocuments = (fqn: string, documents: readonly string[]) =>
  `SELECT chunk_id FROM ${fqn} WHERE document_id IN (${documents.map(quoteLiteral).join(', ')})`;

/**
 * The table's row count and sum of `seq`, with the texts after `afterSeq` in insertion order, from one snapshot: the
 * keyword copy catches up from it as it does from Postgres (keyword-index/copies.ts).
 */
export const textsAfter = (fqn: string, afterSeq: number) =>
  `WITH totals AS (SELECT count(*) AS total, coalesce(sum(seq), 0) AS seq_sum FROM ${fqn})
   SELECT t.total, t.seq_sum, c.seq, c.chunk_id, c.text
   FROM totals t LEFT JOIN (SELECT seq, chunk_id, text FROM ${fqn} WHERE seq > ${int(afterSeq)}) c ON true
   ORDER BY c.seq`;

function int(n: number): string {
  if (!Number.isSafeInteger(n)) throw new RangeError(`not an integer: ${n}`);
  return String(n);
}

/**
 * float32 values as JSON that Trino's cast to array(real) reads back exactly: nine significant digits when they
 * round-trip through a double (the cast's path), else the double's own form; non-finite values are refused.
 */
export function floatsJson(values: Float32Array): string {
  const out: string[] = [];
  for (const v of values) {
    if (!Number.isFinite(v)) throw new RangeError(`an embedding holds ${v}`);
    const short = v.toPrecision(9);
    out.push(Math.fround(Number(short)) === v ? String(Number(short)) : String(v));
  }
  return `[${out.join(',')}]`;
}

// Maintenance (svc lake maintain, src/retrieval/lake-maintain.ts): Trino's Iceberg table procedures, and the metadata
// tables that show what they did. Durations and sizes are checked by the caller and quoted here.

/** An Iceberg metadata table of a collection's table (`"<table>$files"`, `"<table>$snapshots"`). */
export const metadataTableOf = (schema: string, table: string, kind: 'files' | 'snapshots') => tableOf(schema, `${table}$${kind}`);

/** Rewrites the data files smaller than the threshold (and those carrying deletes) into larger ones: one snapshot, or none. */
export const optimize = (fqn: string, fileSizeThreshold: string) =>
  `ALTER TABLE ${fqn} EXECUTE optimize(file_size_threshold => ${quoteLiteral(fileSizeThreshold)})`;
/** Removes the snapshots older than the retention, and the files only they referenced. */
export const expireSnapshots = (fqn: string, retention: string) =>
  `ALTER TABLE ${fqn} EXECUTE expire_snapshots(retention_threshold => ${quoteLiteral(retention)})`;
/** Removes files under the table's location that no metadata names and that are older than the retention. */
export const removeOrphanFiles = (fqn: string, retention: string) =>
  `ALTER TABLE ${fqn} EXECUTE remove_orphan_files(retention_threshold => ${quoteLiteral(retention)})`;
/** Rows of a metadata table: the files (data and delete files) of the current snapshot, or the snapshots kept. */
export const countRows = (metadataTable: string) => `SELECT count(*) FROM ${metadataTable}`;
