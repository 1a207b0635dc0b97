import { sqlState, type Sql } from '../../platform/db/index.ts';
import { doesNotExist } from '../errors.ts';
import type { runJson } from '../wire/json.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import { sqlArrayMember, sqlJsonDouble, sqlJsonObject, sqlJsonString, sqlMember } from '../wire/sql-json.ts';

// Reading runs: whole runs for runs/get and a search's page. The database writes them as MLflow's JSON (the shape
// of runJson, byte for byte what JSON.stringify would give): a page of 100 runs is about 2 000 rows of params, tags
// and metrics, which cost more to parse into objects and write out again than to aggregate where they are. Each
// run's JSON is built when the run is written and kept in tracker_runs.run_json (migration 011), so a page is one
// statement that reads 100 stored texts: at 10 000 runs about half the database time of aggregating them.

export type RunJson = ReturnType<typeof runJson>;

export const RUN_COLUMNS = `run_id, experiment_id, name, user_id, status, start_time, end_time, lifecycle_stage, artifact_uri`;

const str = sqlJsonString;
const keyValues = (table: string) =>
  `(SELECT string_agg('{"key":' || ${str('x.key')} || ',"value":' || ${str('x.value')} || '}', ',' ORDER BY x.key)
    FROM ${table} x WHERE x.run_id = r.run_id)`;
const latestMetrics = `(SELECT string_agg('{"key":' || ${str('m.key')} || ',"value":' || ${sqlJsonDouble('m.value', 'm.is_nan')}
      || ',"timestamp":' || m.timestamp || ',"step":' || m.step || '}', ',' ORDER BY m.key)
    FROM tracker_latest_metrics m WHERE m.run_id = r.run_id)`;

const info = sqlJsonObject([
  sqlMember('run_id', str('r.run_id')),
  sqlMember('run_uuid', str('r.run_id')),
  sqlMember('run_name', str('r.name')),
  sqlMember('experiment_id', str('r.experiment_id')),
  sqlMember('user_id', str('r.user_id')),
  sqlMember('status', str('r.status')),
  sqlMember('start_time', 'r.start_time'),
  sqlMember('end_time', 'r.end_time'),
  sqlMember('artifact_uri', str('r.artifact_uri')),
  sqlMember('lifecycle_stage', str('r.lifecycle_stage')),
]);

// A run's edges: datasets (with the input's tags) and logged models as inputs, logged models as outputs, each list
// in the order of (dataset name, digest, source id).
const dataset = sqlJsonObject([
  sqlArrayMember(
    'tags',
    `(SELECT string_agg('{"key":' || ${str('t.name')} || ',"value":' || ${str('t.value')} || '}', ',' ORDER BY t.name)
      FROM tracker_input_tags t WHERE t.input_id = i.input_id)`,
  ),
  sqlMember(
    'dataset',
    sqlJsonObject([
      sqlMember('name', str('d.name')),
      sqlMember('digest', str('d.digest')),
      sqlMember('source_type', str('d.source_type')),
      sqlMember('source', str('d.source')),
      sqlMember('schema', str(`nullif(d.schema, '')`)),
      sqlMember('profile', str(`nullif(d.profile, '')`)),
    ]),
  ),
]);
const edgeOrder = `ORDER BY d.name, d.digest, i.source_id`;
// One row whatever the count (an aggregate without GROUP BY), for the run `r` of the enclosing statement.
const edges = `(SELECT string_agg(${dataset}, ',' ${edgeOrder})
             FILTER (WHERE i.destination_type = 'RUN_INPUT' AND i.source_type = 'DATASET' AND d.name IS NOT NULL) AS datasets,
           string_agg('{"model_id":' || ${str('i.source_id')} || '}', ',' ${edgeOrder})
             FILTER (WHERE i.destination_type = 'RUN_INPUT' AND i.source_type = 'MODEL') AS models_in,
           string_agg('{"model_id":' || ${str('i.source_id')} || ',"step":' || i.step || '}', ',' ${edgeOrder})
             FILTER (WHERE i.destination_type = 'RUN_OUTPUT') AS models_out
    FROM tracker_inputs i LEFT JOIN tracker_datasets d ON i.source_type = 'DATASET' AND d.dataset_id = i.source_id
    WHERE i.destination_id = r.run_id AND i.destination_type IN ('RUN_INPUT', 'RUN_OUTPUT')) io`;

const run = sqlJsonObject([
  sqlMember('info', info),
  sqlMember(
    'data',
    sqlJsonObject([
      sqlArrayMember('metrics', latestMetrics),
      sqlArrayMember('params', keyValues('tracker_params')),
      sqlArrayMember('tags', keyValues('tracker_tags')),
    ]),
  ),
  sqlMember('inputs', sqlJsonObject([sqlArrayMember('dataset_inputs', 'io.datasets'), sqlArrayMember('model_inputs', 'io.models_in')])),
  sqlMember('outputs', sqlJsonObject([sqlArrayMember('model_outputs', 'io.models_out')])),
]);

/** The JSON of the run `r` of the enclosing statement, built from its rows. */
const BUILT = `(SELECT ${run} FROM ${edges})`;

// A page reads each run's stored JSON (tracker_runs.run_json, migration 011); a run without it yet (written before
// the upgrade's backfill reached it) is built as it is read. On a schema without the column (a server left
// read-only on an older database) every run is built.
const runsJson = (
  stored: boolean,
) => `SELECT '[' || coalesce(string_agg(${stored ? `coalesce(r.run_json, ${BUILT})` : BUILT}, ',' ORDER BY ids.n), '') || ']' AS runs
  FROM unnest($1::text[]) WITH ORDINALITY AS ids(run_id, n)
  JOIN tracker_runs r ON r.run_id = ids.run_id AND ${experimentInWorkspace('r.experiment_id', '$2')}`;
const RUNS_STORED = runsJson(true);
const RUNS_BUILT = runsJson(false);

/**
 * Rebuilds the stored JSON of the runs chosen by `where` (a condition on run `r`, with `params`). Every write to a
 * run calls it last, in its transaction, with the run's row locked since the write began (writeRun in active.ts),
 * so it reads the run as that transaction leaves it and no other write to the run can commit in between.
 */
export async function refreshRunJson(tx: Sql, where: string, params: unknown[]): Promise<void> {
  await tx.query(`UPDATE tracker_runs r SET run_json = ${BUILT} WHERE ${where}`, params);
}

/**
 * Stores the JSON of up to `limit` runs that have none (runs written before migration 011); how many it stored.
 * Each run's row lock is taken as it is updated, so a concurrent write to the run either comes first (and stores the
 * JSON itself, so the run is skipped here) or waits.
 */
export async function backfillRunJson(db: Sql, limit: number): Promise<number> {
  const rows = await db.query(
    `UPDATE tracker_runs r SET run_json = ${BUILT}
     WHERE r.run_id IN (SELECT run_id FROM tracker_runs WHERE run_json IS NULL LIMIT $1) AND r.run_json IS NULL
     RETURNING r.run_id`,
    [limit],
  );
  return rows.length;
}

/**
 * Full runs (info, data, inputs, outputs) as the text of a JSON array, in the order of `runIds`, ids that do not
 * exist (or are in another workspace) left out; one statement whatever the count.
 */
export async function runsJsonText(db: Sql, runIds: string[]): Promise<string> {
  if (runIds.length === 0) return '[]';
  const params = [runIds, requestWorkspace()];
  const rows = await db.query<{ runs: string }>(RUNS_STORED, params).catch((err: unknown) => {
    // 42703 undefined_column: a database not upgraded yet (the server is read-only then); never inside a transaction.
    if (sqlState(err) === '42703') return db.query<{ runs: string }>(RUNS_BUILT, params);
    throw err;
  });
  return rows[0]!.runs;
}

/** One run as the text of its JSON object. */
export async function runJsonText(db: Sql, runId: string): Promise<string> {
  const runs = await runsJsonText(db, [runId]);
  if (runs === '[]') throw doesNotExist(`Run with id=${runId} not found`);
  return runs.slice(1, -1);
}

/** Full runs as objects, for answers that add to them (GraphQL, the prompt lab's run). */
export async function loadRuns(db: Sql, runIds: string[]): Promise<RunJson[]> {
  return JSON.parse(await runsJsonText(db, runIds)) as RunJson[];
}

export async function getRun(db: Sql, runId: string): Promise<RunJson> {
  return JSON.parse(await runJsonText(db, runId)) as RunJson;
}
