import { randomUUID } from 'node:crypto';
import type { Database, Sql } from '../../platform/db/index.ts';
import { doesNotExist, invalidParameter } from '../errors.ts';
import { activeExperiment } from '../experiments/load.ts';
import { randomName } from '../names.ts';
import { writeKeyValues } from '../rows.ts';
import type { KeyValue } from '../wire/fields.ts';
import { pythonJson, type LoggedModelStatus } from '../wire/json.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import { loggedModelNotFound } from './load.ts';

// MLflow 3 logged models: `mlflow.<flavor>.log_model` creates one (PENDING), uploads its files under the model's
// artifact location through the artifact proxy, and finalizes it (READY or FAILED). Values arrive checked
// (messages.ts); these functions write and return the model's id.

export type CreateLoggedModelInput = {
  experimentId: number;
  name: string | undefined;
  modelType: string | undefined;
  sourceRunId: string | undefined;
  params: KeyValue[];
  tags: KeyValue[];
};

export async function createLoggedModel(db: Database, input: CreateLoggedModelInput, now: number): Promise<string> {
  const experiment = await activeExperiment(db, input.experimentId);
  const modelId = `m-${randomUUID().replaceAll('-', '')}`;
  const location = `${experiment.artifact_location.replace(/\/+$/, '')}/models/${modelId}/artifacts`;
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO tracker_logged_models (model_id, experiment_id, name, artifact_location, creation_time, last_updated_time,
                                          status, model_type, source_run_id)
       VALUES ($1, $2, $3, $4, $5, $5, 'PENDING', $6, $7)`,
      [modelId, input.experimentId, input.name ?? randomName(), location, now, input.modelType ?? null, input.sourceRunId ?? null],
    );
    await writeParams(tx, modelId, input.params);
    await writeKeyValues(tx, 'loggedModelTags', [modelId], input.tags);
  });
  return modelId;
}

async function existing(tx: Sql, id: string): Promise<void> {
  const rows = await tx.query(
    `SELECT 1 FROM tracker_logged_models WHERE model_id = $1 AND ${experimentInWorkspace('experiment_id', '$2')}`,
    [id, requestWorkspace()],
  );
  if (rows.length === 0) throw loggedModelNotFound(id);
}

export async function logLoggedModelParams(db: Database, id: string, params: KeyValue[]): Promise<void> {
  await db.transaction(async (tx) => {
    await existing(tx, id);
    await writeParams(tx, id, params);
  });
}

export async function finalizeLoggedModel(db: Sql, id: string, status: LoggedModelStatus, now: number): Promise<void> {
  const rows = await db.query(
    `UPDATE tracker_logged_models SET status = $2, last_updated_time = $3 WHERE model_id = $1 AND ${experimentInWorkspace('experiment_id', '$4')} RETURNING model_id`,
    [id, status, now, requestWorkspace()],
  );
  if (rows.length === 0) throw loggedModelNotFound(id);
}

export async function deleteLoggedModel(db: Sql, id: string, now: number): Promise<void> {
  const rows = await db.query(
    `UPDATE tracker_logged_models SET lifecycle_stage = 'deleted', last_updated_time = $2
     WHERE model_id = $1 AND ${experimentInWorkspace('experiment_id', '$3')} RETURNING model_id`,
    [id, now, requestWorkspace()],
  );
  if (rows.length === 0) throw loggedModelNotFound(id);
}

export async function setLoggedModelTags(db: Database, id: string, tags: KeyValue[]): Promise<void> {
  await db.transaction(async (tx) => {
    await existing(tx, id);
    await writeKeyValues(tx, 'loggedModelTags', [id], tags);
  });
}

export async function deleteLoggedModelTag(db: Database, id: string, key: string): Promise<void> {
  await db.transaction(async (tx) => {
    await existing(tx, id);
    const deleted = await tx.query(`DELETE FROM tracker_logged_model_tags WHERE model_id = $1 AND key = $2 RETURNING key`, [id, key]);
    if (deleted.length === 0) throw doesNotExist(`No tag with key '${key}' found for model with ID '${id}'.`);
  });
}

/**
 * The logged model lists the versions registered from it (tag mlflow.modelVersions, a JSON list), as MLflow does;
 * the UI shows it on the model's page. Called inside the registry's transaction.
 */
export async function noteRegisteredVersion(
  tx: Sql,
  modelId: string,
  version: { name: string; version: number },
  now: number,
): Promise<void> {
  const rows = await tx.query<{ value: string }>(
    `SELECT value FROM tracker_logged_model_tags WHERE model_id = $1 AND key = 'mlflow.modelVersions' FOR UPDATE`,
    [modelId],
  );
  const exists = await tx.query(`SELECT 1 FROM tracker_logged_models WHERE model_id = $1`, [modelId]);
  if (exists.length === 0) return;
  let list: { name: string; version: number }[] = [];
  try {
    const parsed: unknown = rows[0] ? JSON.parse(rows[0].value) : [];
    if (Array.isArray(parsed)) list = parsed;
  } catch {
    // an unreadable value is replaced
  }
  if (!list.some((v) => v.name === version.name && Number(v.version) === version.version)) list.push(version);
  await writeKeyValues(tx, 'loggedModelTags', [modelId], [{ key: 'mlflow.modelVersions', value: pythonJson(list) }]);
  await tx.query(`UPDATE tracker_logged_models SET last_updated_time = $2 WHERE model_id = $1`, [modelId, now]);
}

/** Params of a model are written once, like a run's: the same value again is fine, another is refused. */
async function writeParams(tx: Sql, id: string, params: KeyValue[]): Promise<void> {
  const written = await writeKeyValues(tx, 'loggedModelParams', [id], params, 'keep');
  if (written.length === 0) return;
  const sent = new Map(written.map((p) => [p.key, p.value]));
  const stored = await tx.query<KeyValue>(
    `SELECT key, value FROM tracker_logged_model_params WHERE model_id = $1 AND key = ANY($2::text[])`,
    [id, [...sent.keys()]],
  );
  const changed = stored.find((r) => sent.get(r.key) !== r.value);
  if (changed) {
    throw invalidParameter(
      `Changing param values is not allowed. Param with key='${changed.key}' was already logged with value='${changed.value}' ` +
        `for model ID='${id}'. Attempted logging new value '${sent.get(changed.key)}'.`,
    );
  }
}
