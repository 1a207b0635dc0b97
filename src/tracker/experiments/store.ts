import { isUniqueViolation, type Database, type Sql } from '../../platform/db/index.ts';
import { alreadyExists, doesNotExist, invalidState } from '../errors.ts';
import { writeKeyValues } from '../rows.ts';
import type { KeyValue } from '../wire/fields.ts';
import { requestWorkspace, workspaceIs } from '../workspaces/sql.ts';
import { activeExperiment, getExperiment } from './load.ts';
import { refreshRunJson } from '../runs/load.ts';

// Experiment writes. Values arrive checked (messages.ts); what depends on stored state is checked here, inside
// the write.

/**
 * A new experiment; without a location it gets `<locationBase><id>`: the proxied `mlflow-artifacts:/<id>`, or
 * under a `file://` root the folder itself (artifactLocationBase). Its id.
 */
export async function createExperiment(
  db: Database,
  input: { name: string; artifactLocation: string | undefined; tags: KeyValue[]; locationBase: string },
  now: number,
): Promise<string> {
  try {
    return await db.transaction(async (tx) => {
      const [row] = await tx.query<{ experiment_id: number }>(
        `WITH next AS (SELECT nextval('tracker_experiment_ids') AS id)
         INSERT INTO tracker_experiments (experiment_id, name, artifact_location, creation_time, last_update_time, workspace)
         SELECT id, $1, coalesce($2, $4 || id), $3, $3, $5 FROM next
         RETURNING experiment_id`,
        [input.name, input.artifactLocation ?? null, now, input.locationBase, requestWorkspace()],
      );
      const id = Number(row!.experiment_id);
      await writeKeyValues(tx, 'experimentTags', [id], input.tags);
      return String(id);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw alreadyExists(`Experiment(name=${input.name}) already exists.`);
    throw err;
  }
}

export async function renameExperiment(db: Sql, id: number, name: string, now: number): Promise<void> {
  const experiment = await getExperiment(db, id);
  if (experiment.lifecycle_stage !== 'active') throw invalidState('Cannot rename a non-active experiment.');
  try {
    await db.query(`UPDATE tracker_experiments SET name = $2, last_update_time = $3 WHERE experiment_id = $1`, [id, name, now]);
  } catch (err) {
    if (isUniqueViolation(err)) throw alreadyExists(`Experiment(name=${name}) already exists.`);
    throw err;
  }
}

/** Marks the experiment and every run in it deleted (or active again); one transaction. */
export async function setExperimentLifecycle(db: Database, id: number, to: 'active' | 'deleted', now: number): Promise<void> {
  const from = to === 'deleted' ? 'active' : 'deleted';
  await db.transaction(async (tx) => {
    const updated = await tx.query(
      `UPDATE tracker_experiments SET lifecycle_stage = $2, last_update_time = $3
       WHERE experiment_id = $1 AND lifecycle_stage = $4 AND ${workspaceIs('workspace', '$5')} RETURNING experiment_id`,
      [id, to, now, from, requestWorkspace()],
    );
    if (updated.length === 0) throw doesNotExist(`No Experiment with id=${id} exists`);
    await tx.query(`UPDATE tracker_runs SET lifecycle_stage = $2, deleted_time = $3 WHERE experiment_id = $1`, [
      id,
      to,
      to === 'deleted' ? now : null,
    ]);
    // Each run's stored JSON holds its lifecycle stage (runs/load.ts).
    await refreshRunJson(tx, 'r.experiment_id = $1', [id]);
  });
}

export async function setExperimentTag(db: Sql, id: number, tag: KeyValue): Promise<void> {
  await activeExperiment(db, id);
  await writeKeyValues(db, 'experimentTags', [id], [tag]);
}

export async function deleteExperimentTag(db: Sql, id: number, key: string): Promise<void> {
  await getExperiment(db, id);
  const deleted = await db.query(`DELETE FROM tracker_experiment_tags WHERE experiment_id = $1 AND key = $2 RETURNING key`, [id, key]);
  if (deleted.length === 0) throw doesNotExist(`No tag with name: ${key} in experiment with id ${id}`);
}

/**
 * Where new experiments' artifacts go: behind the proxy (`mlflow-artifacts:/`, so clients need no store
 * credentials), except under a root configured as a `file://` URI, which clients on the server's file system use
 * directly, as MLflow does with such a default artifact root.
 */
export const artifactLocationBase = (artifactRoot: string): string =>
  artifactRoot.startsWith('file://') ? `${artifactRoot.replace(/\/+$/, '')}/` : 'mlflow-artifacts:/';
