import type { Database, Sql } from '../../platform/db/index.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import { doesNotExist, invalidParameter } from '../errors.ts';
import { refreshRunJson } from './load.ts';

/**
 * The run a write goes to: it must exist and be active (MLflow's words and code). Its row is locked until the
 * transaction ends, before anything else of the run is touched: every write to a run takes this lock first, so
 * writes to one run follow each other and none waits for another while holding a row the other needs.
 */
async function lockActiveRun(tx: Sql, runId: string): Promise<{ experimentId: number }> {
  const [row] = await tx.query<{ experiment_id: number; lifecycle_stage: string }>(
    `SELECT experiment_id, lifecycle_stage FROM tracker_runs WHERE run_id = $1 AND ${experimentInWorkspace('experiment_id', '$2')}
     FOR NO KEY UPDATE`,
    [runId, requestWorkspace()],
  );
  if (!row) throw doesNotExist(`Run with id=${runId} not found`);
  if (row.lifecycle_stage !== 'active') {
    throw invalidParameter(`The run ${runId} must be in the 'active' state. Current state is ${row.lifecycle_stage}.`);
  }
  return { experimentId: Number(row.experiment_id) };
}

/**
 * A write to an active run, in one transaction: the run's row locked first (lockActiveRun), then `write`, then the
 * run's stored JSON rebuilt from what the transaction leaves (runs/search and runs/get read it).
 */
export async function writeRun<T>(db: Database, runId: string, write: (tx: Sql, run: { experimentId: number }) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    const result = await write(tx, await lockActiveRun(tx, runId));
    await refreshRunJson(tx, 'r.run_id = $1', [runId]);
    return result;
  });
}

/** The run a read is about: it must exist (deleted runs stay readable). */
export async function existingRun(db: Sql, runId: string): Promise<void> {
  const rows = await db.query(`SELECT 1 FROM tracker_runs WHERE run_id = $1 AND ${experimentInWorkspace('experiment_id', '$2')}`, [
    runId,
    requestWorkspace(),
  ]);
  if (rows.length === 0) throw doesNotExist(`Run with id=${runId} not found`);
}
