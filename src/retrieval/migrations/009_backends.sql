-- Where a collection keeps its chunks: `memory` (retrieval_chunks, ranked by the in-memory copy or pgvector) or
-- `lake` (an Iceberg table written and read through Trino; docs/retrieval.md, "Backends"). A lake collection names its
-- table: the slug and a random suffix, so two deployments (or a collection deleted and created again) sharing one
-- Iceberg catalog never write to each other's table.
ALTER TABLE retrieval_collections ADD COLUMN backend text NOT NULL DEFAULT 'memory' CHECK (backend IN ('memory', 'lake'));
ALTER TABLE retrieval_collections ADD COLUMN lake_table text;
ALTER TABLE retrieval_collections ADD CONSTRAINT retrieval_collections_lake_table
  CHECK ((backend = 'lake') = (lake_table IS NOT NULL));
