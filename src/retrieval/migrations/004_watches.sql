-- Watched sources: a collection may follow a folder or an S3 prefix, scanned on a schedule by one replica at a
-- time (the lease). Each file seen is remembered with what it was last time (its listing version and sha256) and
-- the document it became, so a scan after a restart, or after a stopped scan, reads only what changed.
CREATE TABLE retrieval_watches (
  collection_slug  text PRIMARY KEY REFERENCES retrieval_collections (slug) ON DELETE CASCADE,
  uri              text NOT NULL,
  interval_seconds integer NOT NULL,
  set_by           text NOT NULL,
  set_at           timestamptz NOT NULL DEFAULT now(),
  next_scan_at     timestamptz NOT NULL DEFAULT now(),
  lease_owner      text,
  lease_until      timestamptz,
  last_scan_at     timestamptz,
  last_error       text,
  -- what the last finished scan did
  seen             integer NOT NULL DEFAULT 0,
  ingested         integer NOT NULL DEFAULT 0,
  updated          integer NOT NULL DEFAULT 0,
  deleted          integer NOT NULL DEFAULT 0,
  failed           integer NOT NULL DEFAULT 0
);
CREATE INDEX retrieval_watches_due ON retrieval_watches (next_scan_at);

CREATE TABLE retrieval_watch_files (
  collection_slug text NOT NULL REFERENCES retrieval_watches (collection_slug) ON DELETE CASCADE,
  uri             text NOT NULL,           -- the source it was seen in (a watch moved elsewhere lets it go)
  path            text NOT NULL,           -- key under the source
  version         text NOT NULL,           -- the listing's change marker when last read
  sha256          text,
  document_id     uuid REFERENCES retrieval_documents (id) ON DELETE SET NULL,
  owned           boolean NOT NULL DEFAULT false, -- the watch stored the document (a hand upload is never removed)
  status          text NOT NULL,           -- indexed | failed | skipped
  reason          text,
  attempts        integer NOT NULL DEFAULT 0,
  retry_at        timestamptz,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (collection_slug, uri, path)
);
CREATE INDEX retrieval_watch_files_document ON retrieval_watch_files (document_id);
