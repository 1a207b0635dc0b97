import type { Database, Sql } from '../../platform/db/index.ts';
import { invalidParameter } from '../errors.ts';
import type { DatasetJson, KeyValue, RunInputsJson, RunOutputsJson } from '../wire.ts';
import { activeRun } from './runs.ts';
import { checkLength } from './validate.ts';

// A run's inputs (datasets with their input tags, and logged models) and outputs (logged models, with the step).
// One row per edge in tracker_inputs; logging the same edge again changes nothing, so client retries are safe.

export type DatasetInput = { tags: KeyValue[]; dataset: DatasetJson };

export async function logInputs(
  db: Database,
  runId: string,
  input: { datasets: DatasetInput[]; models: { model_id: string }[] },
): Promise<void> {
  // The first input of a (name, digest) wins, as in MLflow.
  const datasets = new Map<string, DatasetInput>();
  input.datasets.forEach((d, i) => {
    for (const field of ['name', 'digest', 'source_type', 'source'] as const) {
      if (!d.dataset?.[field]) throw invalidParameter(`Missing value for required parameter 'datasets[${i}].dataset.${field}'.`);
    }
    checkLength('dataset name', 500, d.dataset.name);
    checkLength('dataset digest', 36, d.dataset.digest);
    for (const tag of d.tags) {
      checkLength('input tag key', 255, tag.key);
      checkLength('input tag value', 500, tag.value);
    }
    const key = JSON.stringify([d.dataset.name, d.dataset.digest]);
    if (!datasets.has(key)) datasets.set(key, d);
  });
  const list = [...datasets.values()];
  await db.transaction(async (tx) => {
    const { experimentId } = await activeRun(tx, runId);
    if (list.length > 0) await addDatasetInputs(tx, experimentId, runId, list);
    const models = [...new Set(input.models.map((m) => m.model_id).filter(Boolean))];
    if (models.length > 0) {
      await tx.query(
        `INSERT INTO tracker_inputs (input_id, source_type, source_id, destination_type, destination_id)
         SELECT md5(random()::text || m), 'MODEL', m, 'RUN_INPUT', $1 FROM unnest($2::text[]) AS m
         ON CONFLICT (source_type, source_id, destination_type, destination_id) DO NOTHING`,
        [runId, models],
      );
    }
  });
}

async function addDatasetInputs(tx: Sql, experimentId: number, runId: string, list: DatasetInput[]): Promise<void> {
  const col = <K extends keyof DatasetJson>(k: K) => list.map((d) => d.dataset[k] ?? null);
  await tx.query(
    `INSERT INTO tracker_datasets (dataset_id, experiment_id, name, digest, source_type, source, schema, profile)
     SELECT md5(random()::text || n || d), $1, n, d, st, s, sc, p
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS t(n, d, st, s, sc, p)
     ON CONFLICT (experiment_id, name, digest) DO NOTHING`,
    [experimentId, col('name'), col('digest'), col('source_type'), col('source'), col('schema'), col('profile')],
  );
  const ids = await tx.query<{ dataset_id: string; name: string; digest: string }>(
    `SELECT ds.dataset_id, ds.name, ds.digest FROM tracker_datasets ds
     JOIN unnest($2::text[], $3::text[]) AS t(n, d) ON ds.name = t.n AND ds.digest = t.d
     WHERE ds.experiment_id = $1`,
    [experimentId, col('name'), col('digest')],
  );
  // Edges that are new get their tags; an edge logged before keeps the tags it was logged with.
  const inserted = await tx.query<{ input_id: string; source_id: string }>(
    `INSERT INTO tracker_inputs (input_id, source_type, source_id, destination_type, destination_id)
     SELECT md5(random()::text || d), 'DATASET', d, 'RUN_INPUT', $1 FROM unnest($2::text[]) AS d
     ON CONFLICT (source_type, source_id, destination_type, destination_id) DO NOTHING
     RETURNING input_id, source_id`,
    [runId, ids.map((r) => r.dataset_id)],
  );
  const datasetKey = new Map(ids.map((r) => [r.dataset_id, JSON.stringify([r.name, r.digest])]));
  const created = inserted.map((r) => ({ input_id: r.input_id, key: datasetKey.get(r.source_id)! }));
  const byKey = new Map(list.map((d) => [JSON.stringify([d.dataset.name, d.dataset.digest]), d]));
  const tagRows = created.flatMap((c) => {
    const d = byKey.get(c.key);
    const last = new Map((d?.tags ?? []).map((t) => [t.key, t.value ?? '']));
    return [...last].map(([name, value]) => ({ input: c.input_id, name, value }));
  });
  if (tagRows.length > 0) {
    await tx.query(
      `INSERT INTO tracker_input_tags (input_id, name, value) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])`,
      [tagRows.map((r) => r.input), tagRows.map((r) => r.name), tagRows.map((r) => r.value)],
    );
  }
}

/** Logged models as outputs of the run, at a step (MLflow 3's log_model calls this). */
export async function logOutputs(db: Database, runId: string, models: { model_id: string; step: number }[]): Promise<void> {
  await db.transaction(async (tx) => {
    await activeRun(tx, runId);
    if (models.length === 0) return;
    await tx.query(
      `INSERT INTO tracker_inputs (input_id, source_type, source_id, destination_type, destination_id, step)
       SELECT md5(random()::text || m), 'MODEL', m, 'RUN_OUTPUT', $1, s FROM unnest($2::text[], $3::bigint[]) AS t(m, s)
       ON CONFLICT (source_type, source_id, destination_type, destination_id) DO UPDATE SET step = EXCLUDED.step`,
      [runId, models.map((m) => m.model_id), models.map((m) => m.step)],
    );
  });
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
