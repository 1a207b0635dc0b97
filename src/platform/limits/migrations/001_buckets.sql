-- Usage limits: one token bucket per (user, service, action), shared by every replica. `tokens` is what was left at
-- `updated_at`; what has refilled since is computed when the bucket is next charged, in the same statement.
CREATE TABLE limit_buckets (
  user_id     text NOT NULL,
  service     text NOT NULL,
  action      text NOT NULL,
  tokens      double precision NOT NULL,
  updated_at  timestamptz NOT NULL,
  PRIMARY KEY (user_id, service, action)
);
