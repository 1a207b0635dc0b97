import type { Sql } from '../../platform/db/index.ts';
import { groupBy } from '../rows.ts';
import { encodePageToken, startOffset } from '../search/paging.ts';
import { pythonJson } from '../wire/json.ts';
import { requestWorkspace, workspaceIs } from '../workspaces/sql.ts';
import { datasetNotFound } from './store.ts';

// Reading evaluation datasets in MLflow's shape: tags as a JSON object in text, experiment ids as a list.

type Row = {
  dataset_id: string;
  name: string;
  digest: string;
  created_time: number;
  last_update_time: number;
  created_by: string | null;
  last_updated_by: string | null;
};

export async function loadEvaluationDatasets(db: Sql, ids: string[]) {
  if (ids.length === 0) return [];
  const [rows, tags, experiments] = await Promise.all([
    db.query<Row>(`SELECT * FROM tracker_evaluation_datasets WHERE dataset_id = ANY($1::text[]) AND ${workspaceIs('workspace', '$2')}`, [
      ids,
      requestWorkspace(),
    ]),
    db.query<{ dataset_id: string; key: string; value: string }>(
      `SELECT dataset_id, key, value FROM tracker_evaluation_dataset_tags WHERE dataset_id = ANY($1::text[]) ORDER BY key`,
      [ids],
    ),
    db.query<{ dataset_id: string; experiment_id: number }>(
      `SELECT dataset_id, experiment_id FROM tracker_evaluation_dataset_experiments WHERE dataset_id = ANY($1::text[]) ORDER BY experiment_id`,
      [ids],
    ),
  ]);
  const byId = new Map(rows.map((r) => [r.dataset_id, r]));
  const tagsOf = groupBy(tags, (t) => t.dataset_id);
  const experimentsOf = groupBy(experiments, (e) => e.dataset_id);
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    const datasetTags = Object.fromEntries((tagsOf.get(id) ?? []).map((t) => [t.key, t.value]));
    return [
      {
        dataset_id: r.dataset_id,
        name: r.name,
        digest: r.digest,
        created_time: Number(r.created_time),
        last_update_time: Number(r.last_update_time),
        tags: pythonJson(datasetTags),
        ...(r.created_by ? { created_by: r.created_by } : {}),
        ...(r.last_updated_by ? { last_updated_by: r.last_updated_by } : {}),
        experiment_ids: (experimentsOf.get(id) ?? []).map((e) => String(e.experiment_id)),
      },
    ];
  });
}

export async function getEvaluationDataset(db: Sql, id: string) {
  const [dataset] = await loadEvaluationDatasets(db, [id]);
  if (!dataset) throw datasetNotFound(id);
  return dataset;
}

/** A page of a dataset's records, oldest first, as MLflow's JSON text of record dicts. */
export async function getRecords(db: Sql, id: string, req: { maxResults: number; pageToken?: string | undefined }) {
  await getEvaluationDataset(db, id);
  const offset = startOffset(req.pageToken);
  const rows = await db.query<{ record_id: string; record: string; created_time: number; last_update_time: number }>(
    `SELECT record_id, record, created_time, last_update_time FROM tracker_evaluation_dataset_records
     WHERE dataset_id = $1 ORDER BY created_time, record_id LIMIT $2 OFFSET $3`,
    [id, req.maxResults + 1, offset],
  );
  const page = rows.slice(0, req.maxResults).map((r) => ({
    dataset_record_id: r.record_id,
    dataset_id: id,
    expectations: {},
    tags: {},
    ...(JSON.parse(r.record) as object),
    created_time: Number(r.created_time),
    last_update_time: Number(r.last_update_time),
  }));
  return {
    records: JSON.stringify(page),
    ...(rows.length > req.maxResults ? { next_page_token: encodePageToken({ offset: offset + req.maxResults }) } : {}),
  };
}
