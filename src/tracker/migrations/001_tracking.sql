-- Tracker: experiments, runs and their data, in MLflow's model. Times are epoch milliseconds (bigint), as on the wire.
CREATE SEQUENCE tracker_experiment_ids START 1;

CREATE TABLE tracker_experiments (
  experiment_id     bigint PRIMARY KEY,
  name              text NOT NULL UNIQUE,
  artifact_location text NOT NULL,
  lifecycle_stage   text NOT NULL DEFAULT 'active' CHECK (lifecycle_stage IN ('active', 'deleted')),
  creation_time     bigint NOT NULL,
  last_update_time  bigint NOT NULL
);

CREATE TABLE tracker_experiment_tags (
  experiment_id bigint NOT NULL REFERENCES tracker_experiments ON DELETE CASCADE,
  key           text NOT NULL,
  value         text NOT NULL,
  PRIMARY KEY (experiment_id, key)
);

CREATE TABLE tracker_runs (
  run_id          text PRIMARY KEY,
  experiment_id   bigint NOT NULL REFERENCES tracker_experiments,
  name            text NOT NULL DEFAULT '',
  user_id         text NOT NULL DEFAULT '',
  status          text NOT NULL DEFAULT 'RUNNING' CHECK (status IN ('RUNNING', 'SCHEDULED', 'FINISHED', 'FAILED', 'KILLED')),
  start_time      bigint NOT NULL,
  end_time        bigint,
  lifecycle_stage text NOT NULL DEFAULT 'active' CHECK (lifecycle_stage IN ('active', 'deleted')),
  deleted_time    bigint,
  artifact_uri    text NOT NULL
);
CREATE INDEX tracker_runs_experiment ON tracker_runs (experiment_id, start_time DESC, run_id);

CREATE TABLE tracker_params (
  run_id text NOT NULL REFERENCES tracker_runs ON DELETE CASCADE,
  key    text NOT NULL,
  value  text NOT NULL,
  PRIMARY KEY (run_id, key)
);
CREATE INDEX tracker_params_key ON tracker_params (key, value);

CREATE TABLE tracker_tags (
  run_id text NOT NULL REFERENCES tracker_runs ON DELETE CASCADE,
  key    text NOT NULL,
  value  text NOT NULL,
  PRIMARY KEY (run_id, key)
);
CREATE INDEX tracker_tags_key ON tracker_tags (key, value);

-- Every logged point. An exact repeat (a client retry) is one row; NaN is kept as is_nan with value 0 so the
-- double column never holds a NaN that compares equal to everything in Postgres' ordering.
CREATE TABLE tracker_metrics (
  run_id    text NOT NULL REFERENCES tracker_runs ON DELETE CASCADE,
  key       text NOT NULL,
  value     double precision NOT NULL,
  is_nan    boolean NOT NULL DEFAULT false,
  timestamp bigint NOT NULL,
  step      bigint NOT NULL DEFAULT 0,
  model_id  text,
  dataset_name   text,
  dataset_digest text,
  PRIMARY KEY (run_id, key, step, timestamp, value, is_nan)
);

-- The value search and ordering use: the point with the greatest (step, timestamp, value) per run and key.
CREATE TABLE tracker_latest_metrics (
  run_id    text NOT NULL REFERENCES tracker_runs ON DELETE CASCADE,
  key       text NOT NULL,
  value     double precision NOT NULL,
  is_nan    boolean NOT NULL DEFAULT false,
  timestamp bigint NOT NULL,
  step      bigint NOT NULL,
  PRIMARY KEY (run_id, key)
);
CREATE INDEX tracker_latest_metrics_key ON tracker_latest_metrics (key, value);

CREATE TABLE tracker_datasets (
  dataset_id    text PRIMARY KEY,
  experiment_id bigint NOT NULL REFERENCES tracker_experiments,
  name          text NOT NULL,
  digest        text NOT NULL,
  source_type   text NOT NULL,
  source        text NOT NULL,
  schema        text,
  profile       text,
  UNIQUE (experiment_id, name, digest)
);

-- A run's inputs (datasets, with the input's tags such as mlflow.data.context) and outputs (logged models).
CREATE TABLE tracker_inputs (
  input_id         text PRIMARY KEY,
  source_type      text NOT NULL CHECK (source_type IN ('DATASET', 'MODEL')),
  source_id        text NOT NULL,
  destination_type text NOT NULL CHECK (destination_type IN ('RUN_INPUT', 'RUN_OUTPUT')),
  destination_id   text NOT NULL,
  step             bigint NOT NULL DEFAULT 0,
  UNIQUE (source_type, source_id, destination_type, destination_id)
);
CREATE INDEX tracker_inputs_destination ON tracker_inputs (destination_id, destination_type);

CREATE TABLE tracker_input_tags (
  input_id text NOT NULL REFERENCES tracker_inputs ON DELETE CASCADE,
  name     text NOT NULL,
  value    text NOT NULL,
  PRIMARY KEY (input_id, name)
);

-- MLflow 3 logged models (mlflow.<flavor>.log_model creates one, then uploads its files under artifact_location).
CREATE TABLE tracker_logged_models (
  model_id          text PRIMARY KEY,
  experiment_id     bigint NOT NULL REFERENCES tracker_experiments,
  name              text NOT NULL,
  artifact_location text NOT NULL,
  creation_time     bigint NOT NULL,
  last_updated_time bigint NOT NULL,
  status            text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'READY', 'FAILED')),
  status_message    text,
  lifecycle_stage   text NOT NULL DEFAULT 'active' CHECK (lifecycle_stage IN ('active', 'deleted')),
  model_type        text,
  source_run_id     text
);
CREATE INDEX tracker_logged_models_experiment ON tracker_logged_models (experiment_id, creation_time DESC);

CREATE TABLE tracker_logged_model_params (
  model_id text NOT NULL REFERENCES tracker_logged_models ON DELETE CASCADE,
  key      text NOT NULL,
  value    text NOT NULL,
  PRIMARY KEY (model_id, key)
);

CREATE TABLE tracker_logged_model_tags (
  model_id text NOT NULL REFERENCES tracker_logged_models ON DELETE CASCADE,
  key      text NOT NULL,
  value    text NOT NULL,
  PRIMARY KEY (model_id, key)
);

CREATE TABLE tracker_logged_model_metrics (
  model_id       text NOT NULL REFERENCES tracker_logged_models ON DELETE CASCADE,
  key            text NOT NULL,
  value          double precision NOT NULL,
  is_nan         boolean NOT NULL DEFAULT false,
  timestamp      bigint NOT NULL,
  step           bigint NOT NULL DEFAULT 0,
  run_id         text,
  dataset_name   text,
  dataset_digest text,
  PRIMARY KEY (model_id, key, step, timestamp, value, is_nan)
);

-- The Default experiment, id 0, as MLflow clients expect, with the proxied location every experiment gets
-- (mlflow-artifacts:/<id>: clients upload through the server's artifact proxy, whatever the root is).
INSERT INTO tracker_experiments (experiment_id, name, artifact_location, creation_time, last_update_time)
VALUES (0, 'Default', 'mlflow-artifacts:/0', (extract(epoch FROM now()) * 1000)::bigint, (extract(epoch FROM now()) * 1000)::bigint);
