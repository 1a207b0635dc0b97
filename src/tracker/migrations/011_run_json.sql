-- Each run's answer as MLflow's JSON (info, latest metrics, params, tags, inputs and outputs: what runs/get and a
-- search's page return), so a page is a read of stored text instead of an aggregation of every run's rows. Every
-- write to a run rebuilds it last in its own transaction, with the run's row locked from the write's start
-- (src/tracker/runs/active.ts). NULL means not built yet: a read builds such a run from its rows, and
-- `svc tracker db upgrade` (or `svc db migrate`) fills the runs written before this migration right after applying it.
ALTER TABLE tracker_runs ADD COLUMN run_json text;
