import { quoteIdent, quoteLiteral } from '../../platform/trino/index.ts';

// The statements of an import (docs/retrieval.md, "Imports"). The source is read as the caller, in parts: a part is
// the rows whose key hashes to it, so the same key always falls in the same part, whichever worker reads it, and a
// part resumed reads which of its keys the table already holds. Values travel as literals (lake-sql.ts).

/** Buckets a key hashes to; an import's parts are a power of two at most this, each a set of buckets. */
export const BUCKETS = 1024;

/** What the caller asked for: the source, the text to embed, the key and the columns kept beside them. */
export type ImportSpec = {
  /** `catalog.schema.table`, or one SELECT (WITH … SELECT) statement. */
  source: string;
  /** A column or expression of the source: the text that is embedded. */
  text: string;
  /** A column or expression of the source: what makes a row the same row again. */
  key: string;
  /** Columns of the source stored beside each row in the collection's table. */
  metadata: string[];
};

/** A metadata column as the lake keeps it: its Trino type narrowed to one Parquet can carry. */
export type MetadataColumn = { name: string; type: 'bigint' | 'double' | 'boolean' | 'date' | 'varchar' };

const TABLE_NAME = /^[A-Za-z_][\w$]*\.[A-Za-z_][\w$]*\.[A-Za-z_][\w$]*$/;

/** Whether a source names a table (`catalog.schema.table`) rather than being a statement. */
export const isTableSource = (source: string) => TABLE_NAME.test(source.trim());

/** The source as a relation: a table's quoted name, or the statement as a subquery. */
export function sourceRelation(source: string): string {
  const s = source.trim();
  if (isTableSource(s)) return s.split('.').map(quoteIdent).join('.');
  return `(${s}) AS import_source`;
}

const keyHash = (key: string) => `from_big_endian_64(xxhash64(to_utf8(${key})))`;

/** The rows of the source as the import reads them: key and text as varchar, rows without either left out. */
function rowsOf(spec: ImportSpec, metadata: readonly MetadataColumn[]): string {
  const meta = metadata.map((m) => `, ${castTo(quoteIdent(m.name), m.type)} AS ${quoteIdent(m.name)}`).join('');
  return `SELECT CAST(${spec.key} AS varchar) AS import_key, CAST(${spec.text} AS varchar) AS import_text${meta}
    FROM ${sourceRelation(spec.source)}`;
}

const castTo = (expr: string, type: MetadataColumn['type']) =>
  type === 'varchar' ? `CAST(${expr} AS varchar)` : `CAST(${expr} AS ${type})`;

/** The source's metadata columns with their types (no rows): what the table gains before the first part is written. */
export const describeMetadata = (spec: ImportSpec) =>
  `SELECT ${spec.metadata.map(quoteIdent).join(', ') || '1 AS none'} FROM ${sourceRelation(spec.source)} LIMIT 0`;

/** How many rows the import will embed (as the caller). */
export const countRows = (spec: ImportSpec) =>
  `SELECT count(*) FROM (${rowsOf(spec, [])}) WHERE import_key IS NOT NULL AND import_text IS NOT NULL`;

/** One part's rows (as the caller), with each row's bucket. */
export function partRows(spec: ImportSpec, metadata: readonly MetadataColumn[], split: number, splitCount: number): string {
  const meta = metadata.map((m) => `, ${quoteIdent(m.name)}`).join('');
  return `SELECT import_key, import_text, CAST(bitwise_and(${keyHash('import_key')}, ${BUCKETS - 1}) AS integer) AS import_bucket${meta}
    FROM (${rowsOf(spec, metadata)})
    WHERE import_key IS NOT NULL AND import_text IS NOT NULL
      AND bitwise_and(${keyHash('import_key')}, ${splitCount - 1}) = ${int(split)}`;
}

/**
 * The keys of one part of an import the collection's table already holds (as the service): what a resumed part
 * skips. An import's rows are its document's, so two imports whose keys coincide (order 5, customer 5) never meet.
 */
export const keysOfPart = (fqn: string, documentId: string, split: number, splitCount: number) =>
  `SELECT import_key FROM ${fqn} WHERE document_id = ${quoteLiteral(documentId)} AND bitwise_and(import_bucket, ${splitCount - 1}) = ${int(split)}`;

/** The columns an import adds to a collection's table (once; tables made before imports lack them). */
export function addImportColumns(fqn: string, metadata: readonly MetadataColumn[]): string[] {
  return [
    `ALTER TABLE ${fqn} ADD COLUMN IF NOT EXISTS import_key varchar`,
    `ALTER TABLE ${fqn} ADD COLUMN IF NOT EXISTS import_bucket integer`,
    ...metadata.map((m) => `ALTER TABLE ${fqn} ADD COLUMN IF NOT EXISTS ${quoteIdent(m.name)} ${m.type}`),
  ];
}

const showCreateTable = (fqn: string) => `SHOW CREATE TABLE ${fqn}`;

/** Where Trino keeps a table's files: its bucket and the path in it (an import writes its Parquet files there). */
export async function tableLocation(lake: { asService(sql: string): Promise<{ rows: unknown[][] }> }, fqn: string) {
  const created = String((await lake.asService(showCreateTable(fqn))).rows[0]?.[0] ?? '');
  const found = /location = 's3a?:\/\/([^/']+)\/?([^']*)'/.exec(created);
  if (!found) throw new Error(`the table ${fqn} has no S3 location Trino names (SHOW CREATE TABLE)`);
  return { bucket: found[1]!, path: found[2]!.replace(/\/$/, '') };
}

/** Registers the Parquet files written under `location` in the table: one snapshot, so they appear together. */
export const addFiles = (fqn: string, location: string) =>
  `ALTER TABLE ${fqn} EXECUTE add_files(location => ${quoteLiteral(location)}, format => 'PARQUET')`;

/** Trino's type of a metadata column, narrowed to what the lake keeps. */
export function lakeType(trinoType: string): MetadataColumn['type'] {
  const t = trinoType.toLowerCase();
  if (/^(bigint|integer|smallint|tinyint)$/.test(t)) return 'bigint';
  if (/^(double|real|decimal)/.test(t)) return 'double';
  if (t === 'boolean') return 'boolean';
  if (t === 'date') return 'date';
  return 'varchar';
}

function int(n: number): string {
  if (!Number.isSafeInteger(n)) throw new RangeError(`not an integer: ${n}`);
  return String(n);
}
