import type { Sql } from '../db/index.ts';

// The registry of embedded columns (docs/explore.md, "Hybrid SQL"): which (source table, text column) has embeddings
// in which lake collection, and how a source row finds its embedding (the import's key, as varchar, in the table's
// `import_key`). Retrieval writes it when an import is created; explore reads it. It sits in the platform because
// neither service may import the other.
//
// What a row may be used for is decided on retrieval's own rows, read here and nowhere else in explore's reach: the
// import must still exist (deleting its document or collection deletes it), and the collection's current
// `allowed_roles` go to the collections policy, so a collection narrowed after the import is narrowed here too.

export type EmbeddedColumn = {
  importId: string;
  documentId: string;
  collection: string;
  /** `catalog.schema.table`, lower case. */
  sourceTable: string;
  textColumn: string;
  keyColumn: string;
  /** The collection's Iceberg table, `catalog.schema.table`. */
  lakeTable: string;
  model: string;
  dim: number;
};

/** A registry row with what the collections policy needs of its collection now. */
export type EmbeddingSource = EmbeddedColumn & { allowedRoles: string[] };

export type ImportedColumn = {
  importId: string;
  documentId: string;
  collection: string;
  /** The import's `source`, `text` and `key` as the caller wrote them. */
  source: string;
  text: string;
  key: string;
  /** The collection's table as Trino names it, quoted or not. */
  lakeTable: string;
  model: string;
  dim: number;
};

const TABLE = /^[a-z_][a-z0-9_$]*\.[a-z_][a-z0-9_$]*\.[a-z_][a-z0-9_$]*$/;
const COLUMN = /^[a-z_][a-z0-9_]*$/;

/**
 * Records an import's column, when it is one: a table source (`catalog.schema.table`) whose text and key are plain
 * columns. A SELECT source, or an expression, has no table column for a statement to name, and is not recorded.
 * Returns whether it recorded.
 */
export async function registerEmbeddedColumn(db: Sql, imported: ImportedColumn): Promise<boolean> {
  const plain = (name: string) => name.trim().replaceAll('"', '').toLowerCase();
  const [source, text, key] = [plain(imported.source), plain(imported.text), plain(imported.key)];
  if (!TABLE.test(source) || !COLUMN.test(text) || !COLUMN.test(key)) return false;
  await db.query(
    `INSERT INTO embedded_columns (import_id, document_id, collection, source_table, text_column, key_column, lake_table, model, dim)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (import_id) DO NOTHING`,
    [
      imported.importId,
      imported.documentId,
      imported.collection,
      source,
      text,
      key,
      plain(imported.lakeTable),
      imported.model,
      imported.dim,
    ],
  );
  return true;
}

/**
 * The embeddings of one column, newest import first, with their collection's current roles. On a database where
 * retrieval never ran (its tables are missing) nothing is embedded.
 */
export async function embeddingsOf(db: Sql, table: string, column: string): Promise<EmbeddingSource[]> {
  const [present] = await db.query<{ ok: boolean }>(
    `SELECT to_regclass('retrieval_imports') IS NOT NULL AND to_regclass('retrieval_collections') IS NOT NULL AS ok`,
  );
  if (!present?.ok) return [];
  const rows = await db.query<Row>(
    `SELECT e.import_id, e.document_id, e.collection, e.source_table, e.text_column, e.key_column, e.lake_table, e.model,
            e.dim, c.allowed_roles
     FROM embedded_columns e
     JOIN retrieval_imports i ON i.id = e.import_id
     JOIN retrieval_collections c ON c.slug = i.collection_slug AND c.backend = 'lake'
     WHERE e.source_table = $1 AND e.text_column = $2
     ORDER BY e.created_at DESC, e.import_id`,
    [table, column],
  );
  return rows.map((r) => ({
    importId: String(r.import_id),
    documentId: String(r.document_id),
    collection: r.collection,
    sourceTable: r.source_table,
    textColumn: r.text_column,
    keyColumn: r.key_column,
    lakeTable: r.lake_table,
    model: r.model,
    dim: Number(r.dim),
    allowedRoles: r.allowed_roles ?? [],
  }));
}

type Row = {
  import_id: string;
  document_id: string;
  collection: string;
  source_table: string;
  text_column: string;
  key_column: string;
  lake_table: string;
  model: string;
  dim: number;
  allowed_roles: string[] | null;
};
