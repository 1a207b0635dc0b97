import type { Sql } from '../../platform/db/index.ts';
import { doesNotExist, invalidParameter } from '../errors.ts';
import { groupBy, keyValues } from '../rows.ts';
import type { KeyValue } from '../wire/fields.ts';
import { experimentJson, type ExperimentRow } from '../wire/json.ts';
import { requestWorkspace, workspaceIs } from '../workspaces/sql.ts';

export type ExperimentJson = ReturnType<typeof experimentJson>;

const COLUMNS = `experiment_id, name, artifact_location, lifecycle_stage, creation_time, last_update_time`;

/**
 * Experiments with their tags, in the order of `ids` (missing ids, and those of another workspace, are left out):
 * two statements for any number. Every read of an experiment comes through here, so this is where the request's
 * workspace hides the others' experiments (and with them their runs, models and traces: see their loaders).
 */
export async function loadExperiments(db: Sql, ids: number[]): Promise<ExperimentJson[]> {
  if (ids.length === 0) return [];
  const [rows, tags] = await Promise.all([
    db.query<ExperimentRow>(
      `SELECT ${COLUMNS} FROM tracker_experiments WHERE experiment_id = ANY($1::bigint[]) AND ${workspaceIs('workspace', '$2')}`,
      [ids, requestWorkspace()],
    ),
    db.query<KeyValue & { experiment_id: number }>(
      `SELECT experiment_id, key, value FROM tracker_experiment_tags WHERE experiment_id = ANY($1::bigint[]) ORDER BY key`,
      [ids],
    ),
  ]);
  const byId = new Map(rows.map((r) => [Number(r.experiment_id), r]));
  const tagsOf = groupBy(tags, (t) => Number(t.experiment_id));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [experimentJson(row, keyValues(tagsOf.get(id)))] : [];
  });
}

export async function getExperiment(db: Sql, id: number): Promise<ExperimentJson> {
  const [experiment] = await loadExperiments(db, [id]);
  if (!experiment) throw doesNotExist(`No Experiment with id=${id} exists`);
  return experiment;
}

/** The experiment a write goes to: it must exist and be active (MLflow's words and code). */
export async function activeExperiment(db: Sql, id: number): Promise<ExperimentJson> {
  const experiment = await getExperiment(db, id);
  if (experiment.lifecycle_stage !== 'active') {
    throw invalidParameter(`The experiment ${id} must be in the 'active' state. Current state is ${experiment.lifecycle_stage}.`);
  }
  return experiment;
}

/** The active experiment of that name, else a deleted one (MLflow's preference). */
export async function getExperimentByName(db: Sql, name: string): Promise<ExperimentJson> {
  const rows = await db.query<{ experiment_id: number }>(
    `SELECT experiment_id FROM tracker_experiments WHERE name = $1 AND ${workspaceIs('workspace', '$2')} ORDER BY lifecycle_stage = 'active' DESC LIMIT 1`,
    [name, requestWorkspace()],
  );
  if (!rows[0]) throw doesNotExist(`Could not find experiment with name '${name}'`);
  return getExperiment(db, Number(rows[0].experiment_id));
}
