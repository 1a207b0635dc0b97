import type { Database, Sql } from '../../platform/db/index.ts';
import type { DatasetJson } from '../wire/json.ts';
import { writeRun } from './active.ts';
import type { DatasetInput } from './messages.ts';

// A run's inputs (datasets with their input tags, and logged models) and outputs (logged models, with the step).
// One row per edge in tracker_inputs; logging the same edge again changes nothing, so client retries are safe.

/** Datasets (one per name and digest, checked) and logged model ids as inputs of the run. */
export async function logInputs(db: Database, runId: string, input: { datasets: DatasetInput[]; models: string[] }): Promise<void> {
  await writeRun(db, runId, async (tx, { experimentId }) => {
    if (input.datasets.length > 0) await addDatasetInputs(tx, experimentId, runId, input.datasets);
    if (input.models.length > 0) {
      await tx.query(
        `INSERT INTO tracker_inputs (input_id, source_type, source_id, destination_type, destination_id)
         SELECT md5(random()::text || m), 'MODEL', m, 'RUN_INPUT', $1 FROM unnest($2::text[]) AS m
         ON CONFLICT (source_type, source_id, destination_type, destination_id) DO NOTHING`,
        [runId, input.models],
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
  const byKey = new Map(list.map((d) => [JSON.stringify([d.dataset.name, d.dataset.digest]), d]));
  // Tags of many new edges at once (each edge a different owner): one insert, the last value of a key winning.
  const tagRows = inserted.flatMap((r) => {
    const last = new Map((byKey.get(datasetKey.get(r.source_id)!)?.tags ?? []).map((t) => [t.key, t.value]));
    return [...last].map(([name, value]) => ({ input: r.input_id, name, value }));
  });
  if (tagRows.length > 0) {
    await tx.query(`INSERT INTO tracker_input_tags (input_id, name, value) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])`, [
      tagRows.map((r) => r.input),
      tagRows.map((r) => r.name),
      tagRows.map((r) => r.value),
    ]);
  }
}

/** Logged models as outputs of the run, at a step (MLflow 3's log_model calls this). */
export async function logOutputs(db: Database, runId: string, models: { model_id: string; step: number }[]): Promise<void> {
  await writeRun(db, runId, async (tx) => {
    if (models.length === 0) return;
    await tx.query(
      `INSERT INTO tracker_inputs (input_id, source_type, source_id, destination_type, destination_id, step)
       SELECT md5(random()::text || m), 'MODEL', m, 'RUN_OUTPUT', $1, s FROM unnest($2::text[], $3::bigint[]) AS t(m, s)
       ON CONFLICT (source_type, source_id, destination_type, destination_id) DO UPDATE SET step = EXCLUDED.step`,
      [runId, models.map((m) => m.model_id), models.map((m) => m.step)],
    );
  });
}
