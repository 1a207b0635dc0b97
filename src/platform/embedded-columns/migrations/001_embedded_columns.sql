-- Which column of which source table has embeddings in which lake collection (docs/explore.md, "Hybrid SQL").
-- Retrieval writes a row when an import of a table source is created; explore reads it to rewrite
-- semantic_distance(<column>, '<phrase>') into a join with the collection's table. One row per import.
CREATE TABLE embedded_columns (
  import_id    uuid PRIMARY KEY,
  -- the import's rows in the lake are this document of the collection: the join reads only them
  document_id  uuid NOT NULL,
  collection   text NOT NULL,
  -- `catalog.schema.table` and the column, lower case, as explore's validator names them
  source_table text NOT NULL,
  text_column  text NOT NULL,
  key_column   text NOT NULL,
  -- the collection's Iceberg table, `catalog.schema.table`
  lake_table   text NOT NULL,
  model        text NOT NULL,
  dim          integer NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX embedded_columns_source ON embedded_columns (source_table, text_column);
