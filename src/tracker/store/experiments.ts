import { isUniqueViolation, type Sql } from '../../platform/db/index.ts';
import { alreadyExists, doesNotExist, invalidParameter, invalidState } from '../errors.ts';
import { experimentJson, type ExperimentRow, type KeyValue } from '../wire.ts';
import { checkExperimentName, checkKey, checkLength, LIMITS } from './validate.ts';

export type ExperimentJson = ReturnType<typeof experimentJson>;

/** The proxied artifact location of an experiment: clients upload through /api/2.0/mlflow-artifacts. */
export const proxiedExperimentLocation = (experimentId: string | number) => `mlflow-artifacts:/${experimentId}`;

const COLUMNS = `experiment_id, name, artifact_location, lifecycle_stage, creation_time, last_update_time`;

/** Experiments with their tags, in the order of `ids` (missing ids are left out): two statements for any number. */
export async function loadExperiments(db: Sql, ids: number[]): Promise<ExperimentJson[]> {
  if (ids.length === 0) return [];
  const [rows, tags] = await Promise.all([
    db.query<ExperimentRow>(`SELECT ${COLUMNS} FROM tracker_experiments WHERE experiment_id = ANY($1::bigint[])`, [ids]),
    db.query<KeyValue & { experiment_id: number }>(
      `SELECT experiment_id, key, value FROM tracker_experiment_tags WHERE experiment_id = ANY($1::bigint[]) ORDER BY key`,
      [ids],
    ),
  ]);
  const byId = new Map(rows.map((r) => [Number(r.experiment_id), r]));
  const tagsOf = groupBy(tags, (t) => Number(t.experiment_id));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [experimentJson(row, (tagsOf.get(id) ?? []).map(({ key, value }) => ({ key, value })))] : [];
  });
}

export async function getExperiment(db: Sql, id: number): Promise<ExperimentJson> {
  const [experiment] = await loadExperiments(db, [id]);
  if (!experiment) throw doesNotExist(`No Experiment with id=${id} exists`);
  return experiment;
}

/** The active experiment of that name, else a deleted one (MLflow's preference). */
export async function getExperimentByName(db: Sql, name: string): Promise<ExperimentJson> {
  const rows = await db.query<{ experiment_id: number }>(
    `SELECT experiment_id FROM tracker_experiments WHERE name = $1 ORDER BY lifecycle_stage = 'active' DESC LIMIT 1`,
    [name],
  );
  if (!rows[0]) throw doesNotExist(`Could not find experiment with name '${name}'`);
  return getExperiment(db, Number(rows[0].experiment_id));
}

export async function createExperiment(
  db: { transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> },
  input: { name: string; artifactLocation?: string | undefined; tags: KeyValue[] },
  now: number,
): Promise<string> {
  const name = checkExperimentName(input.name);
  for (const tag of input.tags) checkExperimentTag(tag);
  try {
    return await db.transaction(async (tx) => {
      const [row] = await tx.query<{ experiment_id: number }>(
        `WITH next AS (SELECT nextval('tracker_experiment_ids') AS id)
         INSERT INTO tracker_experiments (experiment_id, name, artifact_location, creation_time, last_update_time)
         SELECT id, $1, coalesce($2, 'mlflow-artifacts:/' || id), $3, $3 FROM next
         RETURNING experiment_id`,
        [name, input.artifactLocation || null, now],
      );
      const id = Number(row!.experiment_id);
      await upsertExperimentTags(tx, id, input.tags);
      return String(id);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw alreadyExists(`Experiment(name=${name}) already exists.`);
    throw err;
  }
}

export async function renameExperiment(db: Sql, id: number, newName: string, now: number): Promise<void> {
  const name = checkExperimentName(newName);
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
export async function setExperimentLifecycle(
  db: { transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> },
  id: number,
  to: 'active' | 'deleted',
  now: number,
): Promise<void> {
  const from = to === 'deleted' ? 'active' : 'deleted';
  await db.transaction(async (tx) => {
    const updated = await tx.query(
      `UPDATE tracker_experiments SET lifecycle_stage = $2, last_update_time = $3
       WHERE experiment_id = $1 AND lifecycle_stage = $4 RETURNING experiment_id`,
      [id, to, now, from],
    );
    if (updated.length === 0) throw doesNotExist(`No Experiment with id=${id} exists`);
    await tx.query(
      `UPDATE tracker_runs SET lifecycle_stage = $2, deleted_time = $3 WHERE experiment_id = $1`,
      [id, to, to === 'deleted' ? now : null],
    );
  });
}

export async function setExperimentTag(db: Sql, id: number, tag: KeyValue): Promise<void> {
  checkExperimentTag(tag);
  const experiment = await getExperiment(db, id);
  if (experiment.lifecycle_stage !== 'active') {
    throw invalidParameter(`The experiment ${id} must be in the 'active' state. Current state is ${experiment.lifecycle_stage}.`);
  }
  await upsertExperimentTags(db, id, [tag]);
}

export async function deleteExperimentTag(db: Sql, id: number, key: string): Promise<void> {
  await getExperiment(db, id);
  const deleted = await db.query(`DELETE FROM tracker_experiment_tags WHERE experiment_id = $1 AND key = $2 RETURNING key`, [id, key]);
  if (deleted.length === 0) throw doesNotExist(`No tag with name: ${key} in experiment with id ${id}`);
}

function checkExperimentTag(tag: KeyValue): void {
  checkKey(tag.key, 'key');
  checkLength('value', LIMITS.experimentTagValueLength, tag.value);
}

async function upsertExperimentTags(db: Sql, id: number, tags: KeyValue[]): Promise<void> {
  if (tags.length === 0) return;
  const last = new Map(tags.map((t) => [t.key, t.value ?? '']));
  await db.query(
    `INSERT INTO tracker_experiment_tags (experiment_id, key, value)
     SELECT $1, k, v FROM unnest($2::text[], $3::text[]) AS t(k, v)
     ON CONFLICT (experiment_id, key) DO UPDATE SET value = EXCLUDED.value`,
    [id, [...last.keys()], [...last.values()]],
  );
}

export function groupBy<T, K>(items: T[], keyOf: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = out.get(key);
    if (list) list.push(item);
    else out.set(key, [item]);
  }
  return out;
}
