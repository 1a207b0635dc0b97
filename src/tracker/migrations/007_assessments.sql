-- Assessments of traces (MLflow 3): feedback and expectations, each kept as the JSON of its protobuf message (the
-- Feedback or Expectation in `body`, the AssessmentSource in `source`), so any JSON value reads back as it was sent.
-- An assessment that overrides another (`overrides`) makes that one invalid. They go with their trace.
CREATE TABLE tracker_assessments (
  assessment_id       text PRIMARY KEY,
  trace_id            text NOT NULL REFERENCES tracker_traces ON DELETE CASCADE,
  name                text NOT NULL,
  span_id             text,
  source              jsonb NOT NULL,
  kind                text NOT NULL CHECK (kind IN ('feedback', 'expectation')),
  body                jsonb NOT NULL,
  rationale           text,
  error               jsonb,
  metadata            jsonb,
  overrides           text,
  valid               boolean NOT NULL DEFAULT true,
  create_time_ms      bigint NOT NULL,
  last_update_time_ms bigint NOT NULL
);
CREATE INDEX tracker_assessments_by_trace ON tracker_assessments (trace_id, create_time_ms);
