-- Traces linked to runs (MLflow 3's link_traces_to_run, kept as its entity associations are): search_traces with a
-- run finds a trace linked to it as well as one whose metadata names it (mlflow.sourceRun).
CREATE TABLE tracker_trace_runs (
  trace_id text NOT NULL REFERENCES tracker_traces ON DELETE CASCADE,
  run_id   text NOT NULL REFERENCES tracker_runs ON DELETE CASCADE,
  PRIMARY KEY (run_id, trace_id)
);
