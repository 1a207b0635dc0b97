-- Retrieval: collections, documents, chunks with their embeddings, and the retrieval audit.
-- `version` on a collection moves with every write to its chunks, so in-memory indexes in any replica
-- can tell they are stale with one cheap read.
CREATE TABLE retrieval_collections (
  slug          text PRIMARY KEY,
  name          text NOT NULL,
  description   text NOT NULL DEFAULT '',
  allowed_roles text[] NOT NULL DEFAULT '{}',
  created_by    text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  version       bigint NOT NULL DEFAULT 0
);

CREATE TABLE retrieval_documents (
  id              uuid PRIMARY KEY,
  collection_slug text NOT NULL REFERENCES retrieval_collections (slug) ON DELETE CASCADE,
  filename        text NOT NULL,
  content_type    text NOT NULL,
  format          text NOT NULL,
  size_bytes      bigint NOT NULL,
  sha256          text NOT NULL,
  page_count      integer NOT NULL,
  ocr_pages       integer NOT NULL DEFAULT 0,
  status          text NOT NULL,
  chunk_count     integer NOT NULL,
  uploaded_by     text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX retrieval_documents_collection ON retrieval_documents (collection_slug, created_at);

CREATE TABLE retrieval_chunks (
  id              uuid PRIMARY KEY,
  document_id     uuid NOT NULL REFERENCES retrieval_documents (id) ON DELETE CASCADE,
  collection_slug text NOT NULL REFERENCES retrieval_collections (slug) ON DELETE CASCADE,
  ordinal         integer NOT NULL,
  page            integer NOT NULL,
  text            text NOT NULL,
  embedding       vector NOT NULL,
  seq             bigserial NOT NULL
);
CREATE INDEX retrieval_chunks_collection ON retrieval_chunks (collection_slug, seq);

CREATE TABLE retrieval_audit (
  id          bigserial PRIMARY KEY,
  at          timestamptz NOT NULL DEFAULT now(),
  user_id     text NOT NULL,
  roles       text[] NOT NULL,
  collection  text NOT NULL,
  question    text NOT NULL,
  top_k       integer NOT NULL,
  chunk_ids   text[] NOT NULL,
  scores      double precision[] NOT NULL,
  latency_ms  double precision NOT NULL
);
CREATE INDEX retrieval_audit_user ON retrieval_audit (user_id, id DESC);
