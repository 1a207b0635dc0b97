-- Workspaces (MLflow 3's multi-tenant mode): a named space a platform team gives each team. Experiments, registered
-- models and evaluation datasets belong to one; runs, logged models, traces and model versions follow their
-- experiment or model. Everything that existed before is in 'default', which always exists and is never deleted.
CREATE TABLE tracker_workspaces (
  name         text PRIMARY KEY,
  description  text,
  default_artifact_root text
);
INSERT INTO tracker_workspaces (name, description) VALUES ('default', 'Default workspace');

ALTER TABLE tracker_experiments ADD COLUMN workspace text NOT NULL DEFAULT 'default' REFERENCES tracker_workspaces;
-- An experiment's name is unique within its workspace (MLflow's constraint in workspace mode).
ALTER TABLE tracker_experiments DROP CONSTRAINT tracker_experiments_name_key;
ALTER TABLE tracker_experiments ADD CONSTRAINT tracker_experiments_workspace_name_key UNIQUE (workspace, name);

-- A registered model's name stays the key of its versions, tags and aliases, so it stays unique across
-- workspaces (docs/tracker.md says so); the workspace decides who sees it.
ALTER TABLE tracker_registered_models ADD COLUMN workspace text NOT NULL DEFAULT 'default' REFERENCES tracker_workspaces;
CREATE INDEX tracker_registered_models_workspace ON tracker_registered_models (workspace);

ALTER TABLE tracker_evaluation_datasets ADD COLUMN workspace text NOT NULL DEFAULT 'default' REFERENCES tracker_workspaces;
