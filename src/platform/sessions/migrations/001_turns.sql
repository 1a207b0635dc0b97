-- Conversation turns per (service, user, session): what a follow-up question is read against. Read back only
-- within a service's time to live; a session keeps its newest few turns (older ones are deleted as new ones come).
CREATE TABLE session_turns (
  id          bigserial PRIMARY KEY,
  service     text NOT NULL,
  user_id     text NOT NULL,
  session_id  text NOT NULL,
  question    text NOT NULL,
  detail      jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX session_turns_key ON session_turns (service, user_id, session_id, id);
