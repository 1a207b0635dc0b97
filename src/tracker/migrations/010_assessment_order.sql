-- A trace's assessments read back in the order they were logged, as MLflow's server returns them: several logged
-- within one millisecond otherwise tie on create_time_ms and fall to the order of their random ids.
ALTER TABLE tracker_assessments ADD COLUMN logged_order bigint GENERATED ALWAYS AS IDENTITY;
DROP INDEX tracker_assessments_by_trace;
CREATE INDEX tracker_assessments_by_trace ON tracker_assessments (trace_id, create_time_ms, logged_order);
