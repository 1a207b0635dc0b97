-- Saved questions: a title, the question (if the SQL came from one), the SQL, and the chart chosen for it (opaque to
-- the service beyond its shape), each visible to its owner only.
CREATE TABLE explore_saved (
  id          text PRIMARY KEY,
  owner       text NOT NULL,
  title       text NOT NULL,
  question    text,
  sql         text NOT NULL,
  chart       jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX explore_saved_owner ON explore_saved (owner, created_at DESC, id);
