import { randomUUID } from 'node:crypto';
import type { Database } from '../../platform/db/index.ts';
import { doesNotExist, permissionDenied } from '../errors.ts';
import { activeExperiment } from '../experiments/load.ts';
import { randomName } from '../names.ts';
import { writeKeyValues } from '../rows.ts';
import type { KeyValue, RunStatus } from '../wire/fields.ts';
import { runJson, runInfoJson, type RunRow } from '../wire/json.ts';
import { writeRun } from './active.ts';
import { refreshRunJson, RUN_COLUMNS, type RunJson } from './load.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import { RUN_NAME_TAG, USER_TAG } from './messages.ts';

// Run writes: create, update, delete and restore, tag deletion, runs/log-model. Values arrive checked
// (messages.ts); what depends on stored state (the run or experiment is active) is checked inside the write.

export type CreateRunInput = {
  experimentId: number;
  userId: string;
  /** Undefined: a generated `<adjective>-<noun>-<n>`. */
  runName: string | undefined;
  startTime: number | undefined;
  tags: KeyValue[];
};

/**
 * A run created by a signed-in user is theirs, whatever the client put in user_id and the mlflow.user tag. Replaced,
 * not refused: the MLflow client sends its machine's login name there (getpass), which is rarely the name the
 * token carries, and refusing it would stop every `mlflow.start_run()` in jwt mode.
 */
export function ownedBy(input: CreateRunInput, user: string | undefined): CreateRunInput {
  if (user === undefined) return input;
  return { ...input, userId: user, tags: [...input.tags.filter((t) => t.key !== USER_TAG), { key: USER_TAG, value: user }] };
}

/**
 * With a verified token, a run's mlflow.user is the token's user: a later write that would set it to anything else
 * (set-tag, log-batch) is refused, and setting it to that user again is accepted. Without a token (headers mode,
 * or a call from inside the cluster) the client's value stands, as in MLflow.
 */
export function checkUserTag(tags: readonly KeyValue[], user: string | undefined): void {
  if (user === undefined) return;
  const claimed = tags.find((t) => t.key === USER_TAG && t.value !== user);
  if (claimed) {
    throw permissionDenied(
      `The tag '${USER_TAG}' is the signed-in user's ('${user}') and cannot be set to '${claimed.value}': it follows the verified token.`,
    );
  }
}

/** Deleting mlflow.user would change it too: refused with a verified token. */
export function checkUserTagDeletion(key: string, user: string | undefined): void {
  if (user !== undefined && key === USER_TAG) {
    throw permissionDenied(
      `The tag '${USER_TAG}' is the signed-in user's ('${user}') and cannot be deleted: it follows the verified token.`,
    );
  }
}

export async function createRun(db: Database, input: CreateRunInput, now: number): Promise<RunJson> {
  const experiment = await activeExperiment(db, input.experimentId);
  const runName = input.runName ?? randomName();
  const runId = randomUUID().replaceAll('-', '');
  const artifactUri = `${experiment.artifact_location.replace(/\/+$/, '')}/${runId}/artifacts`;
  const { row, tags } = await db.transaction(async (tx) => {
    const [inserted] = await tx.query<RunRow>(
      `INSERT INTO tracker_runs (run_id, experiment_id, name, user_id, status, start_time, artifact_uri)
       VALUES ($1, $2, $3, $4, 'RUNNING', $5, $6) RETURNING ${RUN_COLUMNS}`,
      [runId, input.experimentId, runName, input.userId, input.startTime ?? now, artifactUri],
    );
    const written = await writeKeyValues(tx, 'runTags', [runId], [...input.tags, { key: RUN_NAME_TAG, value: runName }]);
    await refreshRunJson(tx, 'r.run_id = $1', [runId]);
    return { row: inserted!, tags: written };
  });
  // A new run has only its tags: answer from what was written rather than reading it back.
  tags.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return runJson(row, { metrics: [], params: [], tags }, {}, {});
}

export async function updateRun(
  db: Database,
  runId: string,
  change: { status?: RunStatus | undefined; endTime?: number | undefined; runName?: string | undefined },
): Promise<ReturnType<typeof runInfoJson>> {
  const row = await writeRun(db, runId, async (tx) => {
    const [updated] = await tx.query<RunRow>(
      `UPDATE tracker_runs SET status = coalesce($2, status), end_time = coalesce($3, end_time), name = coalesce($4, name)
       WHERE run_id = $1 RETURNING ${RUN_COLUMNS}`,
      [runId, change.status ?? null, change.endTime ?? null, change.runName ?? null],
    );
    // The run's name and its mlflow.runName tag are one fact.
    if (change.runName) await writeKeyValues(tx, 'runTags', [runId], [{ key: RUN_NAME_TAG, value: change.runName }]);
    return updated!;
  });
  return runInfoJson(row);
}

/** Delete marks the run deleted (its data stays, as in MLflow); restore makes it active again. */
export async function setRunLifecycle(db: Database, runId: string, to: 'active' | 'deleted', now: number): Promise<void> {
  await db.transaction(async (tx) => {
    const rows = await tx.query(
      `UPDATE tracker_runs SET lifecycle_stage = $2, deleted_time = $3
       WHERE run_id = $1 AND ${experimentInWorkspace('experiment_id', '$4')} RETURNING run_id`,
      [runId, to, to === 'deleted' ? now : null, requestWorkspace()],
    );
    if (rows.length === 0) throw doesNotExist(`Run with id=${runId} not found`);
    // The UPDATE took the run's row lock first, as every write to a run does.
    await refreshRunJson(tx, 'r.run_id = $1', [runId]);
  });
}

export async function deleteRunTag(db: Database, runId: string, key: string): Promise<void> {
  await writeRun(db, runId, async (tx) => {
    const deleted = await tx.query(`DELETE FROM tracker_tags WHERE run_id = $1 AND key = $2 RETURNING key`, [runId, key]);
    if (deleted.length === 0) throw doesNotExist(`No tag with name: ${key} in run with id ${runId}`);
  });
}

/** Appends a logged model's description to the run's `mlflow.log-model.history` tag (runs/log-model). */
export async function recordLoggedModel(db: Database, runId: string, model: unknown): Promise<void> {
  await writeRun(db, runId, async (tx) => {
    const [row] = await tx.query<{ value: string }>(
      `SELECT value FROM tracker_tags WHERE run_id = $1 AND key = 'mlflow.log-model.history' FOR UPDATE`,
      [runId],
    );
    let history: unknown[] = [];
    try {
      const parsed: unknown = row ? JSON.parse(row.value) : [];
      if (Array.isArray(parsed)) history = parsed;
    } catch {
      history = [];
    }
    await writeKeyValues(tx, 'runTags', [runId], [{ key: 'mlflow.log-model.history', value: JSON.stringify([...history, model]) }]);
  });
}
