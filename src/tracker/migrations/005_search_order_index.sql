-- A search ordered by a metric reads the runs with a value in the order of tracker_latest_metrics_key (key, value)
-- and stops when the page is full; only a page left short goes on to the runs whose value is NaN, found here
-- (runs/search.ts). Partial: NaN is rare, so the index costs the metric writes next to nothing.
CREATE INDEX tracker_latest_metrics_nan ON tracker_latest_metrics (key, run_id) WHERE is_nan;
