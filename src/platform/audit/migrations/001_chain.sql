-- The audit chain: every audit record of every service, in one order (seq), each hash covering the record and the
-- hash before it. audit_head holds the last seq and hash: its row lock is what orders writers, across replicas too,
-- and a rolled-back writer rolls back its seq with it, so the chain has no gaps.
CREATE TABLE audit_records (
  seq        bigint PRIMARY KEY,
  at         timestamptz NOT NULL,
  service    text NOT NULL,
  action     text NOT NULL,
  actor      text NOT NULL,
  detail     jsonb NOT NULL,
  prev_hash  text NOT NULL,
  hash       text NOT NULL
);
CREATE INDEX audit_records_action ON audit_records (service, action, seq DESC);
CREATE INDEX audit_records_actor ON audit_records (service, action, actor, seq DESC);

CREATE TABLE audit_head (
  id    integer PRIMARY KEY CHECK (id = 1),
  seq   bigint NOT NULL,
  hash  text NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, repeat('0', 64));

-- What retention cut: the last removed record's seq and hash, signed, so the chain stays checkable from there.
CREATE TABLE audit_checkpoints (
  through_seq  bigint PRIMARY KEY,
  hash         text NOT NULL,
  removed      bigint NOT NULL,
  at           timestamptz NOT NULL,
  key_id       text NOT NULL,
  signature    text NOT NULL
);
