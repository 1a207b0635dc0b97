import { randomUUID } from 'node:crypto';
import type { Database, Sql } from '../../platform/db/index.ts';
import { doesNotExist, invalidParameter } from '../errors.ts';
import { loggedModelJson, type KeyValue, type LoggedModelRow, type LoggedModelStatus, type MetricRow } from '../wire.ts';
import { getExperiment, groupBy } from './experiments.ts';
import { randomRunName } from './runs.ts';
import { checkKey, LIMITS, truncate } from './validate.ts';

// MLflow 3 logged models: `mlflow.<flavor>.log_model` creates one (PENDING), uploads its files under the model's
// artifact location through the artifact proxy, and finalizes it (READY or FAILED).

export type LoggedModelJson = ReturnType<typeof loggedModelJson>;

const COLUMNS = `model_id, experiment_id, name, artifact_location, creation_time, last_updated_time, status, status_message,
                 lifecycle_stage, model_type, source_run_id`;

const BAD_NAME_CHARS = ['/', ':', '.', '%', '"', "'"];

/** Logged models with tags, params and metrics, in the order of `ids`; four statements for any number. */
export async function loadLoggedModels(db: Sql, ids: string[]): Promise<LoggedModelJson[]> {
  if (ids.length === 0) return [];
  type Keyed = KeyValue & { model_id: string };
  const [rows, tags, params, metrics] = await Promise.all([
    db.query<LoggedModelRow>(`SELECT ${COLUMNS} FROM tracker_logged_models WHERE model_id = ANY($1::text[])`, [ids]),
    db.query<Keyed>(`SELECT model_id, key, value FROM tracker_logged_model_tags WHERE model_id = ANY($1::text[]) ORDER BY key`, [ids]),
    db.query<Keyed>(`SELECT model_id, key, value FROM tracker_logged_model_params WHERE model_id = ANY($1::text[]) ORDER BY key`, [ids]),
    db.query<MetricRow & { model_id: string }>(
      `SELECT model_id, key, value, is_nan, timestamp, step, run_id, dataset_name, dataset_digest
       FROM tracker_logged_model_metrics WHERE model_id = ANY($1::text[]) ORDER BY key, timestamp, step`,
      [ids],
    ),
  ]);
  const byId = new Map(rows.map((r) => [r.model_id, r]));
  const kv = (list: Keyed[] | undefined) => (list ?? []).map(({ key, value }) => ({ key, value }));
  const tagsOf = groupBy(tags, (t) => t.model_id);
  const paramsOf = groupBy(params, (p) => p.model_id);
  const metricsOf = groupBy(metrics, (m) => m.model_id);
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [loggedModelJson(row, kv(tagsOf.get(id)), kv(paramsOf.get(id)), metricsOf.get(id) ?? [])] : [];
  });
}

export async function getLoggedModel(db: Sql, id: string, opts: { allowDeleted?: boolean } = {}): Promise<LoggedModelJson> {
  const rows = await db.query<{ lifecycle_stage: string }>(`SELECT lifecycle_stage FROM tracker_logged_models WHERE model_id = $1`, [id]);
  if (!rows[0] || (rows[0].lifecycle_stage === 'deleted' && !opts.allowDeleted)) throw notFound(id);
  return (await loadLoggedModels(db, [id]))[0]!;
}

const notFound = (id: string) => doesNotExist(`Logged model with ID '${id}' not found.`);

export type CreateLoggedModelInput = {
  experimentId: number;
  name?: string | undefined;
  modelType?: string | undefined;
  sourceRunId?: string | undefined;
  params: KeyValue[];
  tags: KeyValue[];
};

export async function createLoggedModel(db: Database, input: CreateLoggedModelInput, now: number): Promise<LoggedModelJson> {
  if (input.name !== undefined && (input.name === '' || BAD_NAME_CHARS.some((c) => input.name!.includes(c)))) {
    throw invalidParameter(
      `Invalid model name ('${input.name}') provided. Model name must be a non-empty string and cannot contain the ` +
        `following characters: ('/', ':', '.', '%', '"', "'")`,
    );
  }
  input.params.forEach((p, i) => checkKey(p.key, `params[${i}].key`));
  input.tags.forEach((t, i) => checkKey(t.key, `tags[${i}].key`));
  const experiment = await getExperiment(db, input.experimentId);
  if (experiment.lifecycle_stage !== 'active') {
    throw invalidParameter(`The experiment ${experiment.experiment_id} must be in the 'active' state. Current state is ${experiment.lifecycle_stage}.`);
  }
  const modelId = `m-${randomUUID().replaceAll('-', '')}`;
  const location = `${experiment.artifact_location.replace(/\/+$/, '')}/models/${modelId}/artifacts`;
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO tracker_logged_models (model_id, experiment_id, name, artifact_location, creation_time, last_updated_time,
                                          status, model_type, source_run_id)
       VALUES ($1, $2, $3, $4, $5, $5, 'PENDING', $6, $7)`,
      [modelId, input.experimentId, input.name ?? randomRunName(), location, now, input.modelType || null, input.sourceRunId || null],
    );
    await writeParams(tx, modelId, input.params);
    await upsertTags(tx, modelId, input.tags);
  });
  return (await loadLoggedModels(db, [modelId]))[0]!;
}

async function existing(tx: Sql, id: string): Promise<void> {
  const rows = await tx.query(`SELECT 1 FROM tracker_logged_models WHERE model_id = $1`, [id]);
  if (rows.length === 0) throw notFound(id);
}

export async function logLoggedModelParams(db: Database, id: string, params: KeyValue[]): Promise<void> {
  params.forEach((p, i) => checkKey(p.key, `params[${i}].key`));
  await db.transaction(async (tx) => {
    await existing(tx, id);
    await writeParams(tx, id, params);
  });
}

export async function finalizeLoggedModel(db: Database, id: string, status: LoggedModelStatus, now: number): Promise<LoggedModelJson> {
  const rows = await db.query(
    `UPDATE tracker_logged_models SET status = $2, last_updated_time = $3 WHERE model_id = $1 RETURNING model_id`,
    [id, status, now],
  );
  if (rows.length === 0) throw notFound(id);
  return (await loadLoggedModels(db, [id]))[0]!;
}

export async function deleteLoggedModel(db: Sql, id: string, now: number): Promise<void> {
  const rows = await db.query(
    `UPDATE tracker_logged_models SET lifecycle_stage = 'deleted', last_updated_time = $2 WHERE model_id = $1 RETURNING model_id`,
    [id, now],
  );
  if (rows.length === 0) throw notFound(id);
}

export async function setLoggedModelTags(db: Database, id: string, tags: KeyValue[]): Promise<LoggedModelJson> {
  tags.forEach((t, i) => checkKey(t.key, `tags[${i}].key`));
  await db.transaction(async (tx) => {
    await existing(tx, id);
    await upsertTags(tx, id, tags.map((t) => ({ key: t.key, value: truncate(t.value, LIMITS.tagValueLength) })));
  });
  return (await loadLoggedModels(db, [id]))[0]!;
}

export async function deleteLoggedModelTag(db: Database, id: string, key: string): Promise<void> {
  await db.transaction(async (tx) => {
    await existing(tx, id);
    const deleted = await tx.query(`DELETE FROM tracker_logged_model_tags WHERE model_id = $1 AND key = $2 RETURNING key`, [id, key]);
    if (deleted.length === 0) throw doesNotExist(`No tag with key '${key}' found for model with ID '${id}'.`);
  });
}

async function upsertTags(tx: Sql, id: string, tags: KeyValue[]): Promise<void> {
  if (tags.length === 0) return;
  const last = new Map(tags.map((t) => [t.key, t.value ?? '']));
  await tx.query(
    `INSERT INTO tracker_logged_model_tags (model_id, key, value) SELECT $1, k, v FROM unnest($2::text[], $3::text[]) AS t(k, v)
     ON CONFLICT (model_id, key) DO UPDATE SET value = EXCLUDED.value`,
    [id, [...last.keys()], [...last.values()]],
  );
}

/** Params of a model are written once, like a run's: the same value again is fine, another is refused. */
async function writeParams(tx: Sql, id: string, params: KeyValue[]): Promise<void> {
  if (params.length === 0) return;
  const last = new Map(params.map((p) => [p.key, p.value ?? '']));
  await tx.query(
    `INSERT INTO tracker_logged_model_params (model_id, key, value) SELECT $1, k, v FROM unnest($2::text[], $3::text[]) AS t(k, v)
     ON CONFLICT (model_id, key) DO NOTHING`,
    [id, [...last.keys()], [...last.values()]],
  );
  const stored = await tx.query<KeyValue>(
    `SELECT key, value FROM tracker_logged_model_params WHERE model_id = $1 AND key = ANY($2::text[])`,
    [id, [...last.keys()]],
  );
  const changed = stored.find((r) => last.get(r.key) !== r.value);
  if (changed) {
    throw invalidParameter(
      `Changing param values is not allowed. Param with key='${changed.key}' was already logged with value='${changed.value}' ` +
        `for model ID='${id}'. Attempted logging new value '${last.get(changed.key)}'.`,
    );
  }
}
