-- A collection holds one document per content: an upload of bytes it already holds (same sha256) answers with the
-- existing document instead of storing a copy. The unique index is what makes that hold under concurrent uploads
-- (INSERT ... ON CONFLICT DO NOTHING). Copies stored before this migration are removed first, the oldest of each
-- kept (their chunks go with them through the foreign key), and the collections they were in move to a new
-- version, so in-memory indexes drop the removed chunks.
WITH ranked AS (
  SELECT id, collection_slug,
         row_number() OVER (PARTITION BY collection_slug, sha256 ORDER BY created_at, id) AS n
  FROM retrieval_documents
), removed AS (
  DELETE FROM retrieval_documents d USING ranked r WHERE d.id = r.id AND r.n > 1 RETURNING d.collection_slug
)
UPDATE retrieval_collections SET version = nextval('retrieval_collection_versions')
WHERE slug IN (SELECT collection_slug FROM removed);

CREATE UNIQUE INDEX retrieval_documents_content ON retrieval_documents (collection_slug, sha256);
