-- Tracker model registry: registered models, their versions, stages, aliases and tags.
CREATE TABLE tracker_registered_models (
  name              text PRIMARY KEY,
  creation_time     bigint NOT NULL,
  last_updated_time bigint NOT NULL,
  description       text NOT NULL DEFAULT ''
);

CREATE TABLE tracker_registered_model_tags (
  name  text NOT NULL REFERENCES tracker_registered_models ON DELETE CASCADE ON UPDATE CASCADE,
  key   text NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (name, key)
);

CREATE TABLE tracker_model_versions (
  name              text NOT NULL REFERENCES tracker_registered_models ON DELETE CASCADE ON UPDATE CASCADE,
  version           integer NOT NULL,
  creation_time     bigint NOT NULL,
  last_updated_time bigint NOT NULL,
  description       text NOT NULL DEFAULT '',
  user_id           text NOT NULL DEFAULT '',
  current_stage     text NOT NULL DEFAULT 'None' CHECK (current_stage IN ('None', 'Staging', 'Production', 'Archived')),
  source            text NOT NULL,
  run_id            text,
  run_link          text NOT NULL DEFAULT '',
  status            text NOT NULL DEFAULT 'READY',
  status_message    text NOT NULL DEFAULT '',
  storage_location  text,
  model_id          text,
  deleted           boolean NOT NULL DEFAULT false,
  PRIMARY KEY (name, version)
);
-- Version search by run (`run_id = '...'`) and the logged model's versions.
CREATE INDEX tracker_model_versions_run ON tracker_model_versions (run_id);
CREATE INDEX tracker_model_versions_model ON tracker_model_versions (model_id);

CREATE TABLE tracker_model_version_tags (
  name    text NOT NULL,
  version integer NOT NULL,
  key     text NOT NULL,
  value   text NOT NULL,
  PRIMARY KEY (name, version, key),
  FOREIGN KEY (name, version) REFERENCES tracker_model_versions ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE TABLE tracker_registered_model_aliases (
  name    text NOT NULL REFERENCES tracker_registered_models ON DELETE CASCADE ON UPDATE CASCADE,
  alias   text NOT NULL,
  version integer NOT NULL,
  PRIMARY KEY (name, alias)
);
