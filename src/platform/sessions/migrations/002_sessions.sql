-- One row per conversation (service, user, session): what a history lists. `title` is the user's name for it (null:
-- the first question, kept here because older turns are let go), `scope` what the service says it is about (the
-- collection of retrieval's last answer). Sessions that already have turns get their row.
CREATE TABLE sessions (
  service        text NOT NULL,
  user_id        text NOT NULL,
  session_id     text NOT NULL,
  title          text,
  first_question text NOT NULL,
  scope          text NOT NULL DEFAULT '',
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (service, user_id, session_id)
);
CREATE INDEX sessions_recent ON sessions (service, user_id, updated_at DESC);
INSERT INTO sessions (service, user_id, session_id, first_question, created_at, updated_at)
  SELECT service, user_id, session_id, (array_agg(question ORDER BY id))[1], min(created_at), max(created_at)
  FROM session_turns GROUP BY service, user_id, session_id;
