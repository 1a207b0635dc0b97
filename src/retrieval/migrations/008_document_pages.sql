-- Each document's extracted text, page by page, as ingestion read it: what GET .../documents/{id}/text answers and
-- what a re-index chunks again (after a change of chunk settings or embedding model) without the original file.
-- Documents stored before this migration have no rows here: their text is only in their chunks, which overlap, so
-- it is not rebuilt from them; such a document answers 409 until it is uploaded again.
CREATE TABLE retrieval_document_pages (
  document_id uuid NOT NULL REFERENCES retrieval_documents (id) ON DELETE CASCADE,
  page        integer NOT NULL,
  text        text NOT NULL,
  PRIMARY KEY (document_id, page)
);
