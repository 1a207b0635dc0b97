-- The uploaded file kept in the object store (SVC_ORIGINALS_STORE), so a cited page can be shown as it looks:
-- `original_bytes` is its size while it is kept, null when none is (uploaded before this, removed after
-- SVC_ORIGINALS_RETENTION_DAYS). `text_bytes` is the extracted text the chunks hold. A collection's size is the sum
-- of both over its documents.
ALTER TABLE retrieval_documents ADD COLUMN original_bytes bigint;
ALTER TABLE retrieval_documents ADD COLUMN text_bytes bigint NOT NULL DEFAULT 0;
UPDATE retrieval_documents d
  SET text_bytes = coalesce((SELECT sum(octet_length(k.text)) FROM retrieval_chunks k WHERE k.document_id = d.id), 0);
