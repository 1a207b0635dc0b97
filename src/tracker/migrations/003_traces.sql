-- Tracker traces (MLflow's TraceInfo): one row per trace, its tags and its request metadata. Spans are not kept.
CREATE TABLE tracker_traces (
  trace_id           text PRIMARY KEY,
  experiment_id      bigint NOT NULL REFERENCES tracker_experiments,
  client_request_id  text,
  request_time       bigint NOT NULL,
  execution_duration bigint,
  state              text NOT NULL,
  request_preview    text,
  response_preview   text
);
CREATE INDEX tracker_traces_by_experiment ON tracker_traces (experiment_id, request_time DESC, trace_id);

CREATE TABLE tracker_trace_tags (
  trace_id text NOT NULL REFERENCES tracker_traces ON DELETE CASCADE,
  key      text NOT NULL,
  value    text NOT NULL,
  PRIMARY KEY (trace_id, key)
);

CREATE TABLE tracker_trace_metadata (
  trace_id text NOT NULL REFERENCES tracker_traces ON DELETE CASCADE,
  key      text NOT NULL,
  value    text NOT NULL,
  PRIMARY KEY (trace_id, key)
);
