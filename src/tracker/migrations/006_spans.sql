-- Tracker spans (MLflow 3 keeps them in its tracking store when they arrive over OTLP): one row per span of a trace,
-- as OpenTelemetry describes it. Ids are lowercase hex; times are Unix nanoseconds. Attributes, events and links
-- are kept as OTLP's JSON shapes (AnyValue with its type), so a span reads back exactly as it was sent.
CREATE TABLE tracker_spans (
  trace_id             text NOT NULL REFERENCES tracker_traces ON DELETE CASCADE,
  span_id              text NOT NULL,
  otel_trace_id        text NOT NULL,
  parent_span_id       text,
  name                 text NOT NULL,
  -- mlflow.spanType, decoded, for search_traces' span.type
  span_type            text,
  kind                 integer NOT NULL DEFAULT 0,
  trace_state          text,
  flags                bigint,
  status_code          integer NOT NULL DEFAULT 0,
  status_message       text,
  start_time_unix_nano bigint NOT NULL,
  end_time_unix_nano   bigint,
  attributes           jsonb NOT NULL DEFAULT '[]',
  events               jsonb NOT NULL DEFAULT '[]',
  links                jsonb NOT NULL DEFAULT '[]',
  PRIMARY KEY (trace_id, span_id)
);
CREATE INDEX tracker_spans_by_name ON tracker_spans (name);
