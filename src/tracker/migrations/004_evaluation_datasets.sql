-- GenAI evaluation datasets (MLflow 3): a named dataset with tags, linked to experiments, holding records
-- (inputs, expectations, tags), one record per distinct inputs.
CREATE TABLE tracker_evaluation_datasets (
  dataset_id       text PRIMARY KEY,
  name             text NOT NULL,
  digest           text NOT NULL,
  created_time     bigint NOT NULL,
  last_update_time bigint NOT NULL,
  created_by       text,
  last_updated_by  text
);

CREATE TABLE tracker_evaluation_dataset_tags (
  dataset_id text NOT NULL REFERENCES tracker_evaluation_datasets ON DELETE CASCADE,
  key        text NOT NULL,
  value      text NOT NULL,
  PRIMARY KEY (dataset_id, key)
);

CREATE TABLE tracker_evaluation_dataset_experiments (
  dataset_id    text NOT NULL REFERENCES tracker_evaluation_datasets ON DELETE CASCADE,
  experiment_id bigint NOT NULL REFERENCES tracker_experiments,
  PRIMARY KEY (dataset_id, experiment_id)
);

CREATE TABLE tracker_evaluation_dataset_records (
  record_id        text PRIMARY KEY,
  dataset_id       text NOT NULL REFERENCES tracker_evaluation_datasets ON DELETE CASCADE,
  inputs_key       text NOT NULL,
  record           text NOT NULL,
  created_time     bigint NOT NULL,
  last_update_time bigint NOT NULL,
  UNIQUE (dataset_id, inputs_key)
);
