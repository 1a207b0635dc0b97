-- Imports: rows of a Trino table or query embedded into a lake collection (docs/retrieval.md, "Imports"). An import
-- is split by a hash of its key into `split_count` parts (a power of two); each part is claimed by one worker at a
-- time (a claim lapses when its heartbeat stops), and is done when every row of it is in the collection's table.
-- The import's rows in the lake are one document of the collection, so listing, deleting and the audit see it.
CREATE TABLE retrieval_imports (
  id              uuid PRIMARY KEY,
  collection_slug text NOT NULL REFERENCES retrieval_collections (slug) ON DELETE CASCADE,
  document_id     uuid NOT NULL REFERENCES retrieval_documents (id) ON DELETE CASCADE,
  -- what the caller asked, and its digest: the same import asked again is this one, resumed
  spec            jsonb NOT NULL,
  spec_digest     text NOT NULL,
  created_by      text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  status          text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done', 'failed', 'cancelled')),
  error           text,
  rows_total      bigint NOT NULL,
  split_count     integer NOT NULL,
  finished_at     timestamptz
);
CREATE UNIQUE INDEX retrieval_imports_spec ON retrieval_imports (collection_slug, spec_digest);

CREATE TABLE retrieval_import_splits (
  import_id  uuid NOT NULL REFERENCES retrieval_imports (id) ON DELETE CASCADE,
  split      integer NOT NULL,
  rows_done  bigint NOT NULL DEFAULT 0,
  done       boolean NOT NULL DEFAULT false,
  -- a part a worker began: resumed, it first reads which of its keys the table holds
  started    boolean NOT NULL DEFAULT false,
  worker     text,
  heartbeat  timestamptz,
  PRIMARY KEY (import_id, split)
);

-- The rate an import reports: rows done since its workers last started, over the time since.
ALTER TABLE retrieval_imports ADD COLUMN run_started_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE retrieval_imports ADD COLUMN run_rows_start bigint NOT NULL DEFAULT 0;
