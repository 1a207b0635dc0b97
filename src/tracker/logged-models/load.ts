import type { Sql } from '../../platform/db/index.ts';
import { doesNotExist } from '../errors.ts';
import { groupBy, keyValues } from '../rows.ts';
import type { KeyValue } from '../wire/fields.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import { loggedModelJson, type LoggedModelRow, type MetricRow } from '../wire/json.ts';

export type LoggedModelJson = ReturnType<typeof loggedModelJson>;

const COLUMNS = `model_id, experiment_id, name, artifact_location, creation_time, last_updated_time, status, status_message,
                 lifecycle_stage, model_type, source_run_id`;

export const loggedModelNotFound = (id: string) => doesNotExist(`Logged model with ID '${id}' not found.`);

/** Logged models with tags, params and metrics, in the order of `ids` (another workspace's left out); four statements for any number. */
export async function loadLoggedModels(db: Sql, ids: string[]): Promise<LoggedModelJson[]> {
  if (ids.length === 0) return [];
  type Keyed = KeyValue & { model_id: string };
  const [rows, tags, params, metrics] = await Promise.all([
    db.query<LoggedModelRow>(
      `SELECT ${COLUMNS} FROM tracker_logged_models WHERE model_id = ANY($1::text[]) AND ${experimentInWorkspace('experiment_id', '$2')}`,
      [ids, requestWorkspace()],
    ),
    db.query<Keyed>(`SELECT model_id, key, value FROM tracker_logged_model_tags WHERE model_id = ANY($1::text[]) ORDER BY key`, [ids]),
    db.query<Keyed>(`SELECT model_id, key, value FROM tracker_logged_model_params WHERE model_id = ANY($1::text[]) ORDER BY key`, [ids]),
    db.query<MetricRow & { model_id: string }>(
      `SELECT model_id, key, value, is_nan, timestamp, step, run_id, dataset_name, dataset_digest
       FROM tracker_logged_model_metrics WHERE model_id = ANY($1::text[]) ORDER BY key, timestamp, step`,
      [ids],
    ),
  ]);
  const byId = new Map(rows.map((r) => [r.model_id, r]));
  const tagsOf = groupBy(tags, (t) => t.model_id);
  const paramsOf = groupBy(params, (p) => p.model_id);
  const metricsOf = groupBy(metrics, (m) => m.model_id);
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [loggedModelJson(row, keyValues(tagsOf.get(id)), keyValues(paramsOf.get(id)), metricsOf.get(id) ?? [])] : [];
  });
}

export async function getLoggedModel(db: Sql, id: string, opts: { allowDeleted?: boolean } = {}): Promise<LoggedModelJson> {
  const rows = await db.query<{ lifecycle_stage: string }>(
    `SELECT lifecycle_stage FROM tracker_logged_models WHERE model_id = $1 AND ${experimentInWorkspace('experiment_id', '$2')}`,
    [id, requestWorkspace()],
  );
  if (!rows[0] || (rows[0].lifecycle_stage === 'deleted' && !opts.allowDeleted)) throw loggedModelNotFound(id);
  return (await loadLoggedModels(db, [id]))[0]!;
}
