import type { Sql } from '../../platform/db/index.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';

export type DatasetSummary = { experiment_id: string; name: string; digest: string; context?: string };

/**
 * The datasets used as run inputs in these experiments, with the input's context tag (training, eval, ...), for
 * the UI's dataset filter (the request's workspace's experiments only). At most 1000, as MLflow.
 */
export async function searchDatasets(db: Sql, experimentIds: number[]): Promise<DatasetSummary[]> {
  if (experimentIds.length === 0) return [];
  const rows = await db.query<{ experiment_id: number; name: string; digest: string; context: string | null }>(
    `SELECT DISTINCT d.experiment_id, d.name, d.digest, t.value AS context
     FROM tracker_datasets d
     JOIN tracker_inputs i ON i.source_type = 'DATASET' AND i.source_id = d.dataset_id
     LEFT JOIN tracker_input_tags t ON t.input_id = i.input_id AND t.name = 'mlflow.data.context'
     WHERE d.experiment_id = ANY($1::bigint[]) AND ${experimentInWorkspace('d.experiment_id', '$2')}
     ORDER BY d.experiment_id, d.name, d.digest, context
     LIMIT 1000`,
    [experimentIds, requestWorkspace()],
  );
  return rows.map((r) => ({
    experiment_id: String(r.experiment_id),
    name: r.name,
    digest: r.digest,
    ...(r.context ? { context: r.context } : {}),
  }));
}
