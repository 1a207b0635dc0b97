import type { Sql } from '../../platform/db/index.ts';
import { doesNotExist } from '../errors.ts';
import { encodePageToken, startOffset } from '../search/paging.ts';
import { metricJson, type MetricRow } from '../wire/json.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import { existingRun } from './active.ts';

// Reading metric points: one metric's history, and the sampled histories of many runs for the UI's charts.

const POINT = `key, value, is_nan, timestamp, step, run_id, model_id, dataset_name, dataset_digest`;

/** Every point of one metric of a run in MLflow's order (timestamp, step, value); paged when max_results is given. */
export async function metricHistory(
  db: Sql,
  req: { runId: string; key: string; maxResults?: number | undefined; pageToken?: string | undefined },
): Promise<{ metrics: ReturnType<typeof metricJson>[]; next_page_token?: string }> {
  await existingRun(db, req.runId);
  const offset = startOffset(req.pageToken);
  const limit = req.maxResults === undefined ? null : req.maxResults + 1;
  const rows = await db.query<MetricRow>(
    `SELECT ${POINT} FROM tracker_metrics WHERE run_id = $1 AND key = $2
     ORDER BY timestamp, step, value, is_nan LIMIT $3 OFFSET $4`,
    [req.runId, req.key, limit, offset],
  );
  const more = req.maxResults !== undefined && rows.length > req.maxResults;
  const page = more ? rows.slice(0, req.maxResults) : rows;
  return {
    metrics: page.map(metricJson),
    ...(more ? { next_page_token: encodePageToken({ offset: offset + req.maxResults! }) } : {}),
  };
}

/**
 * Up to max_results points per run of one metric, sampled evenly over the steps (first and last kept), for the
 * UI's charts. One statement for all runs.
 */
export async function metricHistoryBulkInterval(
  db: Sql,
  req: { runIds: string[]; key: string; maxResults: number; startStep?: number | undefined; endStep?: number | undefined },
): Promise<{ metrics: (ReturnType<typeof metricJson> & { run_id: string })[] }> {
  const existing = await db.query<{ run_id: string }>(
    `SELECT run_id FROM tracker_runs WHERE run_id = ANY($1::text[]) AND ${experimentInWorkspace('experiment_id', '$2')}`,
    [req.runIds, requestWorkspace()],
  );
  const missing = req.runIds.find((id) => !existing.some((r) => r.run_id === id));
  if (missing) throw doesNotExist(`Run with id=${missing} not found`);
  const max = Math.max(1, req.maxResults);
  const rows = await db.query<MetricRow & { run_id: string }>(
    `WITH points AS (
       SELECT ${POINT},
              row_number() OVER (PARTITION BY run_id ORDER BY step, timestamp, value) - 1 AS i,
              count(*) OVER (PARTITION BY run_id) AS n
       FROM tracker_metrics
       WHERE run_id = ANY($1::text[]) AND key = $2 AND ($4::bigint IS NULL OR step BETWEEN $4 AND $5))
     SELECT ${POINT} FROM points
     WHERE ($3 = 1 AND i = n - 1)
        OR ($3 > 1 AND (n <= $3 OR i = n - 1 OR i = 0
            OR floor(i * ($3 - 1)::float8 / (n - 1)) <> floor((i - 1) * ($3 - 1)::float8 / (n - 1))))
     ORDER BY run_id, step, timestamp, value`,
    [req.runIds, req.key, max, req.startStep ?? null, req.endStep ?? null],
  );
  return { metrics: rows.map((r) => ({ ...metricJson(r), run_id: r.run_id })) };
}

/** Each run's history of one metric (runs in id order, points in MLflow's order), at most maxResults a run. */
export async function metricHistoryBulk(
  db: Sql,
  req: { runIds: string[]; key: string; maxResults: number },
): Promise<{ metrics: (ReturnType<typeof metricJson> & { run_id: string })[] }> {
  const rows = await db.query<MetricRow & { run_id: string }>(
    `SELECT ${POINT} FROM (
       SELECT ${POINT}, row_number() OVER (PARTITION BY run_id ORDER BY timestamp, step, value, is_nan) AS i
       FROM tracker_metrics WHERE run_id = ANY($1::text[]) AND key = $2
         AND run_id IN (SELECT run_id FROM tracker_runs WHERE ${experimentInWorkspace('experiment_id', '$4')})) p
     WHERE i <= $3
     ORDER BY run_id, timestamp, step, value, is_nan`,
    [req.runIds, req.key, req.maxResults, requestWorkspace()],
  );
  return { metrics: rows.map((r) => ({ ...metricJson(r), run_id: r.run_id })) };
}
