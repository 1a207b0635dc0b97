import { parquetWriteBuffer } from 'hyparquet-writer';
import type { MetadataColumn } from './statements.ts';

// One file of imported rows in the columns of a collection's table (lake-sql.ts), which Trino's add_files registers
// by column name: an import writes Parquet itself rather than INSERT … VALUES, which Trino parses at a few hundred
// rows a second (docs/retrieval.md, "Imports"). Every column is optional, as the table's are.

export type ImportedRow = {
  chunkId: string;
  key: string;
  bucket: number;
  text: string;
  seq: number;
  embedding: Float32Array;
  metadata: unknown[];
};

type Element = Record<string, unknown>;

const PHYSICAL: Record<MetadataColumn['type'], Element> = {
  bigint: { type: 'INT64' },
  double: { type: 'DOUBLE' },
  boolean: { type: 'BOOLEAN' },
  date: { type: 'INT32', converted_type: 'DATE' },
  varchar: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
};

const optional = (name: string, element: Element) => ({ name, repetition_type: 'OPTIONAL', ...element });
const string = (name: string) => optional(name, PHYSICAL.varchar);

export function importFile(
  rows: readonly ImportedRow[],
  document: { id: string; filename: string },
  metadata: readonly MetadataColumn[],
  createdMicros: bigint,
): Uint8Array {
  const same = <T>(v: T) => rows.map(() => v);
  const columnData = [
    { name: 'chunk_id', data: rows.map((r) => r.chunkId) },
    { name: 'document_id', data: same(document.id) },
    { name: 'file_name', data: same(document.filename) },
    { name: 'page', data: same(1) },
    { name: 'chunk_index', data: same(0) },
    { name: 'text', data: rows.map((r) => r.text) },
    // plain arrays: the writer walks nested values as arrays
    { name: 'embedding', data: rows.map((r) => Array.from(r.embedding)) },
    { name: 'created', data: same(createdMicros) },
    { name: 'seq', data: rows.map((r) => BigInt(r.seq)) },
    { name: 'import_key', data: rows.map((r) => r.key) },
    { name: 'import_bucket', data: rows.map((r) => r.bucket) },
    ...metadata.map((m, i) => ({ name: m.name, data: rows.map((r) => metadataValue(r.metadata[i], m.type)) })),
  ];
  const schema = [
    { name: 'root', num_children: columnData.length },
    string('chunk_id'),
    string('document_id'),
    string('file_name'),
    optional('page', { type: 'INT32' }),
    optional('chunk_index', { type: 'INT32' }),
    string('text'),
    { name: 'embedding', repetition_type: 'OPTIONAL', num_children: 1, converted_type: 'LIST' },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    optional('element', { type: 'FLOAT' }),
    optional('created', { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } }),
    optional('seq', { type: 'INT64' }),
    string('import_key'),
    optional('import_bucket', { type: 'INT32' }),
    ...metadata.map((m) => optional(m.name, PHYSICAL[m.type])),
  ];
  // statistics off for the vectors: min and max of every element would be work no query uses
  const buffer = parquetWriteBuffer({ columnData, schema, statistics: false } as Parameters<typeof parquetWriteBuffer>[0]);
  return new Uint8Array(buffer);
}

/** A metadata value as Trino's client gave it, in the column's Parquet form. */
function metadataValue(v: unknown, type: MetadataColumn['type']): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'bigint':
      return BigInt(v as string | number);
    case 'double':
      return Number(v);
    case 'boolean':
      return Boolean(v);
    case 'date':
      return Math.round(Date.parse(`${String(v)}T00:00:00Z`) / 86_400_000); // days since the epoch
    default:
      return String(v);
  }
}
