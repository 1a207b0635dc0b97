import type { Sql } from '../../platform/db/index.ts';
import { doesNotExist } from '../errors.ts';
import { groupBy, keyValues } from '../rows.ts';
import type { KeyValue } from '../wire/fields.ts';
import { runJson, type DatasetJson, type MetricRow, type RunInputsJson, type RunOutputsJson, type RunRow } from '../wire/json.ts';

// Reading runs: whole runs for runs/get and a search's page, in a fixed number of statements whatever the count.

export type RunJson = ReturnType<typeof runJson>;

export const RUN_COLUMNS = `run_id, experiment_id, name, user_id, status, start_time, end_time, lifecycle_stage, artifact_uri`;

/**
 * Full runs (info, data, inputs, outputs) in the order of `runIds`, ids that do not exist left out. A fixed number
 * of statements whatever the count: runs, params, tags, latest metrics, inputs and outputs.
 */
export async function loadRuns(db: Sql, runIds: string[]): Promise<RunJson[]> {
  if (runIds.length === 0) return [];
  const [runs, params, tags, metrics, io] = await Promise.all([
    db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM tracker_runs WHERE run_id = ANY($1::text[])`, [runIds]),
    db.query<KeyValue & { run_id: string }>(`SELECT run_id, key, value FROM tracker_params WHERE run_id = ANY($1::text[]) ORDER BY key`, [
      runIds,
    ]),
    db.query<KeyValue & { run_id: string }>(`SELECT run_id, key, value FROM tracker_tags WHERE run_id = ANY($1::text[]) ORDER BY key`, [
      runIds,
    ]),
    db.query<MetricRow & { run_id: string }>(
      `SELECT run_id, key, value, is_nan, timestamp, step FROM tracker_latest_metrics WHERE run_id = ANY($1::text[]) ORDER BY key`,
      [runIds],
    ),
    loadRunInputsOutputs(db, runIds),
  ]);
  const byId = new Map(runs.map((r) => [r.run_id, r]));
  const paramsOf = groupBy(params, (p) => p.run_id);
  const tagsOf = groupBy(tags, (t) => t.run_id);
  const metricsOf = groupBy(metrics, (m) => m.run_id);
  return runIds.flatMap((id) => {
    const row = byId.get(id);
    if (!row) return [];
    const { inputs, outputs } = io.get(id) ?? { inputs: {}, outputs: {} };
    const runMetrics = (metricsOf.get(id) ?? []).map(({ run_id: _, ...m }) => m);
    return [runJson(row, { metrics: runMetrics, params: keyValues(paramsOf.get(id)), tags: keyValues(tagsOf.get(id)) }, inputs, outputs)];
  });
}

export async function getRun(db: Sql, runId: string): Promise<RunJson> {
  const [run] = await loadRuns(db, [runId]);
  if (!run) throw doesNotExist(`Run with id=${runId} not found`);
  return run;
}

type EdgeRow = {
  destination_id: string;
  destination_type: 'RUN_INPUT' | 'RUN_OUTPUT';
  source_type: 'DATASET' | 'MODEL';
  source_id: string;
  step: number;
  name: string | null;
  digest: string | null;
  dataset_source_type: string | null;
  source: string | null;
  schema: string | null;
  profile: string | null;
  tags: { key: string; value: string }[] | null;
};

/** Inputs and outputs of many runs in one statement. */
export async function loadRunInputsOutputs(
  db: Sql,
  runIds: string[],
): Promise<Map<string, { inputs: RunInputsJson; outputs: RunOutputsJson }>> {
  const rows = await db.query<EdgeRow>(
    `SELECT i.destination_id, i.destination_type, i.source_type, i.source_id, i.step,
            d.name, d.digest, d.source_type AS dataset_source_type, d.source, d.schema, d.profile,
            (SELECT json_agg(json_build_object('key', t.name, 'value', t.value) ORDER BY t.name)
               FROM tracker_input_tags t WHERE t.input_id = i.input_id) AS tags
     FROM tracker_inputs i
     LEFT JOIN tracker_datasets d ON i.source_type = 'DATASET' AND d.dataset_id = i.source_id
     WHERE i.destination_id = ANY($1::text[]) AND i.destination_type IN ('RUN_INPUT', 'RUN_OUTPUT')
     ORDER BY i.destination_id, d.name, d.digest, i.source_id`,
    [runIds],
  );
  const out = new Map<string, { inputs: RunInputsJson; outputs: RunOutputsJson }>();
  for (const row of rows) {
    let entry = out.get(row.destination_id);
    if (!entry) out.set(row.destination_id, (entry = { inputs: {}, outputs: {} }));
    if (row.destination_type === 'RUN_OUTPUT') {
      (entry.outputs.model_outputs ??= []).push({ model_id: row.source_id, step: Number(row.step) });
    } else if (row.source_type === 'MODEL') {
      (entry.inputs.model_inputs ??= []).push({ model_id: row.source_id });
    } else if (row.name !== null) {
      const dataset: DatasetJson = {
        name: row.name,
        digest: row.digest ?? '',
        source_type: row.dataset_source_type ?? '',
        source: row.source ?? '',
        ...(row.schema ? { schema: row.schema } : {}),
        ...(row.profile ? { profile: row.profile } : {}),
      };
      (entry.inputs.dataset_inputs ??= []).push({ ...(row.tags?.length ? { tags: row.tags } : {}), dataset });
    }
  }
  return out;
}
