-- The search backend (docs/retrieval.md, "Backends"): a collection's chunks stay in retrieval_chunks and are
-- indexed in an OpenSearch index of its own, which BM25 and k-NN rank. The lake's table and the search backend's
-- index are both the collection's chunk store, named by one column: null on the memory backend.
ALTER TABLE retrieval_collections DROP CONSTRAINT retrieval_collections_lake_table;
ALTER TABLE retrieval_collections DROP CONSTRAINT retrieval_collections_backend_check;
ALTER TABLE retrieval_collections RENAME COLUMN lake_table TO chunk_store;
ALTER TABLE retrieval_collections ADD CONSTRAINT retrieval_collections_backend_check
  CHECK (backend IN ('memory', 'lake', 'search'));
ALTER TABLE retrieval_collections ADD CONSTRAINT retrieval_collections_chunk_store
  CHECK ((backend = 'memory') = (chunk_store IS NULL));

-- Documents whose chunks reached OpenSearch while their upload failed, and could not be removed then (OpenSearch
-- had gone away): removed by the collection's next write. Their chunks never rank, since a ranked chunk is read
-- back from retrieval_chunks, where an uncommitted document has none.
CREATE TABLE retrieval_search_orphans (
  chunk_store text NOT NULL,
  document_id uuid NOT NULL,
  PRIMARY KEY (chunk_store, document_id)
);
