import { randomInt, randomUUID } from 'node:crypto';
import type { Database, Sql } from '../../platform/db/index.ts';
import { doesNotExist, invalidParameter } from '../errors.ts';
import { runInfoJson, runJson, type KeyValue, type MetricRow, type RunRow, type RunStatus } from '../wire.ts';
import { getExperiment, groupBy } from './experiments.ts';
import { loadRunInputsOutputs } from './inputs.ts';
import { checkKey, LIMITS, truncate } from './validate.ts';

export type RunJson = ReturnType<typeof runJson>;

export const RUN_NAME_TAG = 'mlflow.runName';
export const USER_TAG = 'mlflow.user';

const RUN_COLUMNS = `run_id, experiment_id, name, user_id, status, start_time, end_time, lifecycle_stage, artifact_uri`;

/**
 * Full runs (info, data, inputs, outputs) in the order of `runIds`, ids that do not exist left out. A fixed number
 * of statements whatever the count: runs, params, tags, latest metrics, inputs and outputs.
 */
export async function loadRuns(db: Sql, runIds: string[]): Promise<RunJson[]> {
  if (runIds.length === 0) return [];
  const [runs, params, tags, metrics, io] = await Promise.all([
    db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM tracker_runs WHERE run_id = ANY($1::text[])`, [runIds]),
    db.query<KeyValue & { run_id: string }>(
      `SELECT run_id, key, value FROM tracker_params WHERE run_id = ANY($1::text[]) ORDER BY key`,
      [runIds],
    ),
    db.query<KeyValue & { run_id: string }>(
      `SELECT run_id, key, value FROM tracker_tags WHERE run_id = ANY($1::text[]) ORDER BY key`,
      [runIds],
    ),
    db.query<MetricRow & { run_id: string }>(
      `SELECT run_id, key, value, is_nan, timestamp, step FROM tracker_latest_metrics WHERE run_id = ANY($1::text[]) ORDER BY key`,
      [runIds],
    ),
    loadRunInputsOutputs(db, runIds),
  ]);
  const byId = new Map(runs.map((r) => [r.run_id, r]));
  const paramsOf = groupBy(params, (p) => p.run_id);
  const tagsOf = groupBy(tags, (t) => t.run_id);
  const metricsOf = groupBy(metrics, (m) => m.run_id);
  const kv = (rows: (KeyValue & { run_id: string })[] | undefined) => (rows ?? []).map(({ key, value }) => ({ key, value }));
  return runIds.flatMap((id) => {
    const row = byId.get(id);
    if (!row) return [];
    const { inputs, outputs } = io.get(id) ?? { inputs: {}, outputs: {} };
    const runMetrics = (metricsOf.get(id) ?? []).map(({ run_id: _, ...m }) => m);
    return [runJson(row, { metrics: runMetrics, params: kv(paramsOf.get(id)), tags: kv(tagsOf.get(id)) }, inputs, outputs)];
  });
}

export async function getRun(db: Sql, runId: string): Promise<RunJson> {
  const [run] = await loadRuns(db, [runId]);
  if (!run) throw doesNotExist(`Run with id=${runId} not found`);
  return run;
}

/** The run a write goes to: it must exist and be active (MLflow's words and code). */
export async function activeRun(tx: Sql, runId: string): Promise<{ experimentId: number }> {
  const [row] = await tx.query<{ experiment_id: number; lifecycle_stage: string }>(
    `SELECT experiment_id, lifecycle_stage FROM tracker_runs WHERE run_id = $1`,
    [runId],
  );
  if (!row) throw doesNotExist(`Run with id=${runId} not found`);
  if (row.lifecycle_stage !== 'active') {
    throw invalidParameter(`The run ${runId} must be in the 'active' state. Current state is ${row.lifecycle_stage}.`);
  }
  return { experimentId: Number(row.experiment_id) };
}

export type CreateRunInput = {
  experimentId: number;
  userId: string;
  runName: string | undefined;
  startTime: number | undefined;
  tags: KeyValue[];
};

export async function createRun(db: Database, input: CreateRunInput, now: number): Promise<RunJson> {
  const experiment = await getExperiment(db, input.experimentId);
  if (experiment.lifecycle_stage !== 'active') {
    throw invalidParameter(
      `The experiment ${experiment.experiment_id} must be in the 'active' state. Current state is ${experiment.lifecycle_stage}.`,
    );
  }
  const tags = new Map<string, string>();
  input.tags.forEach((t, i) => {
    checkKey(t.key, `tags[${i}].key`);
    tags.set(t.key, truncate(t.value ?? '', LIMITS.tagValueLength));
  });
  const nameTag = tags.get(RUN_NAME_TAG);
  if (input.runName && nameTag && input.runName !== nameTag) {
    throw invalidParameter(
      "Both 'run_name' argument and 'mlflow.runName' tag are specified, but with different values " +
        `(run_name='${input.runName}', mlflow.runName='${nameTag}').`,
    );
  }
  const runName = input.runName || nameTag || randomRunName();
  tags.set(RUN_NAME_TAG, runName);
  if (input.userId && !tags.has(USER_TAG)) tags.set(USER_TAG, input.userId);

  const runId = randomUUID().replaceAll('-', '');
  const artifactUri = `${experiment.artifact_location.replace(/\/+$/, '')}/${runId}/artifacts`;
  const row = await db.transaction(async (tx) => {
    const [inserted] = await tx.query<RunRow>(
      `INSERT INTO tracker_runs (run_id, experiment_id, name, user_id, status, start_time, artifact_uri)
       VALUES ($1, $2, $3, $4, 'RUNNING', $5, $6) RETURNING ${RUN_COLUMNS}`,
      [runId, input.experimentId, runName, input.userId, input.startTime ?? now, artifactUri],
    );
    await tx.query(
      `INSERT INTO tracker_tags (run_id, key, value) SELECT $1, k, v FROM unnest($2::text[], $3::text[]) AS t(k, v)`,
      [runId, [...tags.keys()], [...tags.values()]],
    );
    return inserted!;
  });
  // A new run has only its tags: answer from what was written rather than reading it back.
  const runTags = [...tags].map(([key, value]) => ({ key, value })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return runJson(row, { metrics: [], params: [], tags: runTags }, {}, {});
}

export async function updateRun(
  db: Database,
  runId: string,
  change: { status?: RunStatus | undefined; endTime?: number | undefined; runName?: string | undefined },
): Promise<ReturnType<typeof runInfoJson>> {
  const row = await db.transaction(async (tx) => {
    await activeRun(tx, runId);
    const [updated] = await tx.query<RunRow>(
      `UPDATE tracker_runs SET status = coalesce($2, status), end_time = coalesce($3, end_time), name = coalesce($4, name)
       WHERE run_id = $1 RETURNING ${RUN_COLUMNS}`,
      [runId, change.status ?? null, change.endTime ?? null, change.runName || null],
    );
    if (change.runName) await upsertRunNameTag(tx, runId, change.runName);
    return updated!;
  });
  return runInfoJson(row);
}

export async function upsertRunNameTag(tx: Sql, runId: string, name: string): Promise<void> {
  await tx.query(
    `INSERT INTO tracker_tags (run_id, key, value) VALUES ($1, $2, $3)
     ON CONFLICT (run_id, key) DO UPDATE SET value = EXCLUDED.value`,
    [runId, RUN_NAME_TAG, name],
  );
}

/** Delete marks the run deleted (its data stays, as in MLflow); restore makes it active again. */
export async function setRunLifecycle(db: Sql, runId: string, to: 'active' | 'deleted', now: number): Promise<void> {
  const rows = await db.query(
    `UPDATE tracker_runs SET lifecycle_stage = $2, deleted_time = $3 WHERE run_id = $1 RETURNING run_id`,
    [runId, to, to === 'deleted' ? now : null],
  );
  if (rows.length === 0) throw doesNotExist(`Run with id=${runId} not found`);
}

// MLflow names unnamed runs "<adjective>-<noun>-<number>"; these words are our own.
const ADJECTIVES = ['amber', 'brave', 'calm', 'clever', 'bold', 'bright', 'gentle', 'keen', 'lucky', 'merry', 'quiet', 'rapid', 'silver', 'steady', 'sunny', 'swift', 'tidy', 'vivid', 'wise', 'zesty'];
const NOUNS = ['otter', 'falcon', 'maple', 'comet', 'river', 'badger', 'cedar', 'harbor', 'lynx', 'meadow', 'orca', 'pebble', 'quartz', 'robin', 'summit', 'tiger', 'willow', 'yak', 'zebra', 'heron'];

export function randomRunName(): string {
  return `${ADJECTIVES[randomInt(ADJECTIVES.length)]}-${NOUNS[randomInt(NOUNS.length)]}-${randomInt(1000)}`;
}
