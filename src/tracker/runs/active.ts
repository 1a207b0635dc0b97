import type { Sql } from '../../platform/db/index.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import { doesNotExist, invalidParameter } from '../errors.ts';

/** The run a write goes to: it must exist and be active (MLflow's words and code). Its experiment. */
export async function activeRun(tx: Sql, runId: string): Promise<{ experimentId: number }> {
  const [row] = await tx.query<{ experiment_id: number; lifecycle_stage: string }>(
    `SELECT experiment_id, lifecycle_stage FROM tracker_runs WHERE run_id = $1 AND ${experimentInWorkspace('experiment_id', '$2')}`,
    [runId, requestWorkspace()],
  );
  if (!row) throw doesNotExist(`Run with id=${runId} not found`);
  if (row.lifecycle_stage !== 'active') {
    throw invalidParameter(`The run ${runId} must be in the 'active' state. Current state is ${row.lifecycle_stage}.`);
  }
  return { experimentId: Number(row.experiment_id) };
}

/** The run a read is about: it must exist (deleted runs stay readable). */
export async function existingRun(db: Sql, runId: string): Promise<void> {
  const rows = await db.query(`SELECT 1 FROM tracker_runs WHERE run_id = $1 AND ${experimentInWorkspace('experiment_id', '$2')}`, [
    runId,
    requestWorkspace(),
  ]);
  if (rows.length === 0) throw doesNotExist(`Run with id=${runId} not found`);
}
