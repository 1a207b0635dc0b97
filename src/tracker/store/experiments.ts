import type { Sql } from '../../platform/db/index.ts';

/** The proxied artifact location of an experiment: clients upload through /api/2.0/mlflow-artifacts. */
export const proxiedExperimentLocation = (experimentId: string) => `mlflow-artifacts:/${experimentId}`;

/** The migration leaves the Default experiment's location empty; the server fills it once. */
export async function fillDefaultExperimentLocation(db: Sql): Promise<void> {
  await db.query(`UPDATE tracker_experiments SET artifact_location = $1 WHERE experiment_id = 0 AND artifact_location = ''`, [
    proxiedExperimentLocation('0'),
  ]);
}
