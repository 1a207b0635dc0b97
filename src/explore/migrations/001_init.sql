-- Explore: published dashboards, conversation history per user and session, and feedback.
CREATE TABLE explore_dashboards (
  id             text PRIMARY KEY,
  owner          text NOT NULL,
  visibility     text NOT NULL DEFAULT 'private' CHECK (visibility IN ('private', 'users', 'groups', 'public')),
  allowed_users  jsonb NOT NULL DEFAULT '[]',
  allowed_groups jsonb NOT NULL DEFAULT '[]',
  title          text NOT NULL,
  question       text NOT NULL,
  sql            text NOT NULL,
  columns        jsonb NOT NULL,
  file           text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  deleted_at     timestamptz
);
CREATE INDEX explore_dashboards_owner ON explore_dashboards (owner, created_at DESC);

CREATE TABLE explore_turns (
  id         bigserial PRIMARY KEY,
  user_id    text NOT NULL,
  session_id text NOT NULL,
  question   text NOT NULL,
  sql        text NOT NULL,
  summary    text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX explore_turns_session ON explore_turns (user_id, session_id, id);

CREATE TABLE explore_feedback (
  id           bigserial PRIMARY KEY,
  dashboard_id text NOT NULL,
  user_id      text NOT NULL,
  rating       text NOT NULL CHECK (rating IN ('up', 'down')),
  comment      text NOT NULL DEFAULT '',
  created_at   timestamptz NOT NULL DEFAULT now()
);
