import { randomUUID } from 'node:crypto';
import type { Database, Sql } from '../../platform/db/index.ts';
import { alreadyExists, doesNotExist, invalidParameter } from '../errors.ts';
import { activeExperiment } from '../experiments/load.ts';
import { writeKeyValues } from '../rows.ts';
import { existingRun } from '../runs/active.ts';
import type { KeyValue } from '../wire/fields.ts';
import { traceNotFound } from './load.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import type { TraceState, TraceWrite } from './messages.ts';

// Trace writes. A trace belongs to an active experiment; writing the same trace again (a client retry, or the v3
// call made when a trace that v2 started ends) updates it. Every trace gets MLflow's `mlflow.artifactLocation` tag.

export const ARTIFACT_TAG = 'mlflow.artifactLocation';

/** Where a trace's artifacts live: traces/<id>/artifacts under its experiment's artifact location. */
export const artifactLocationOf = (experiment: { artifact_location: string }, traceId: string) =>
  `${experiment.artifact_location.replace(/\/+$/, '')}/traces/${traceId}/artifacts`;

export async function writeTrace(db: Database, trace: TraceWrite): Promise<void> {
  const experiment = await activeExperiment(db, trace.experimentId);
  const location = artifactLocationOf(experiment, trace.traceId);
  await db.transaction(async (tx) => {
    // a trace of another workspace's experiment with that id is not this request's to write
    const written = await tx.query(
      `INSERT INTO tracker_traces (trace_id, experiment_id, client_request_id, request_time, execution_duration, state, request_preview, response_preview)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (trace_id) DO UPDATE SET client_request_id = EXCLUDED.client_request_id, request_time = EXCLUDED.request_time,
         execution_duration = EXCLUDED.execution_duration, state = EXCLUDED.state, request_preview = EXCLUDED.request_preview,
         response_preview = EXCLUDED.response_preview
       WHERE ${experimentInWorkspace('tracker_traces.experiment_id', '$9')}
       RETURNING trace_id`,
      [
        trace.traceId,
        trace.experimentId,
        trace.clientRequestId ?? null,
        trace.requestTime,
        trace.executionDuration ?? null,
        trace.state,
        trace.requestPreview ?? null,
        trace.responsePreview ?? null,
        requestWorkspace(),
      ],
    );
    if (written.length === 0) throw alreadyExists(`Trace with ID ${trace.traceId} already exists.`);
    await writeKeyValues(tx, 'traceMetadata', [trace.traceId], trace.metadata);
    await writeKeyValues(tx, 'traceTags', [trace.traceId], [{ key: ARTIFACT_TAG, value: location }, ...trace.tags]);
  });
}

/** A v2 trace begins: a new id, in progress. */
export async function startTraceV2(
  db: Database,
  input: { experimentId: number; requestTime: number; metadata: KeyValue[]; tags: KeyValue[] },
): Promise<string> {
  const traceId = `tr-${randomUUID().replaceAll('-', '')}`;
  await writeTrace(db, {
    ...input,
    traceId,
    clientRequestId: undefined,
    executionDuration: undefined,
    state: 'IN_PROGRESS',
    requestPreview: undefined,
    responsePreview: undefined,
  });
  return traceId;
}

/** A v2 trace ends: its duration from the start, its state, and metadata and tags merged in. */
export async function endTraceV2(
  db: Database,
  traceId: string,
  input: { endTime: number; state: TraceState; metadata: KeyValue[]; tags: KeyValue[] },
): Promise<void> {
  await db.transaction(async (tx) => {
    const rows = await tx.query(
      `UPDATE tracker_traces SET execution_duration = $2 - request_time, state = $3 WHERE trace_id = $1 RETURNING trace_id`,
      [traceId, input.endTime, input.state],
    );
    if (rows.length === 0) throw traceNotFound(traceId);
    await writeKeyValues(tx, 'traceMetadata', [traceId], input.metadata);
    await writeKeyValues(tx, 'traceTags', [traceId], input.tags);
  });
}

/** The trace must exist (one primary-key read; a write to it follows). */
export async function existingTrace(tx: Sql, traceId: string): Promise<void> {
  const rows = await tx.query(`SELECT 1 FROM tracker_traces WHERE trace_id = $1 AND ${experimentInWorkspace('experiment_id', '$2')}`, [
    traceId,
    requestWorkspace(),
  ]);
  if (rows.length === 0) throw traceNotFound(traceId);
}

export async function setTraceTag(db: Database, traceId: string, tag: KeyValue): Promise<void> {
  await db.transaction(async (tx) => {
    await existingTrace(tx, traceId);
    await writeKeyValues(tx, 'traceTags', [traceId], [tag]);
  });
}

export async function deleteTraceTag(db: Database, traceId: string, key: string): Promise<void> {
  await db.transaction(async (tx) => {
    await existingTrace(tx, traceId);
    const deleted = await tx.query(`DELETE FROM tracker_trace_tags WHERE trace_id = $1 AND key = $2 RETURNING key`, [traceId, key]);
    if (deleted.length === 0) throw doesNotExist(`No trace tag with key '${key}' for trace with ID '${traceId}'`);
  });
}

/** Deletes the named traces of an experiment, or its traces older than a time (oldest first, at most maxTraces). */
export async function deleteTraces(
  db: Sql,
  input: { experimentId: number; traceIds: string[]; maxTimestamp: number | undefined; maxTraces: number | undefined },
): Promise<number> {
  const rows =
    input.traceIds.length > 0
      ? await db.query(
          `DELETE FROM tracker_traces WHERE experiment_id = $1 AND trace_id = ANY($2::text[])
             AND ${experimentInWorkspace('experiment_id', '$3')} RETURNING trace_id`,
          [input.experimentId, input.traceIds, requestWorkspace()],
        )
      : await db.query(
          `DELETE FROM tracker_traces WHERE trace_id IN (
             SELECT trace_id FROM tracker_traces WHERE experiment_id = $1 AND request_time <= $2
               AND ${experimentInWorkspace('experiment_id', '$4')}
             ORDER BY request_time, trace_id LIMIT $3)
           RETURNING trace_id`,
          [input.experimentId, input.maxTimestamp, input.maxTraces ?? null, requestWorkspace()],
        );
  return rows.length;
}

const MAX_TRACE_LINKS = 100;

/** Links traces to a run (MLflow's link_traces_to_run): at most 100 a request; ids of no trace are passed over. */
export async function linkTracesToRun(db: Sql, traceIds: string[], runId: string): Promise<void> {
  if (traceIds.length === 0) return;
  if (traceIds.length > MAX_TRACE_LINKS)
    throw invalidParameter(
      `Cannot link more than ${MAX_TRACE_LINKS} traces to a run in a single request. Provided ${traceIds.length} traces.`,
    );
  await existingRun(db, runId);
  await db.query(
    `INSERT INTO tracker_trace_runs (trace_id, run_id)
     SELECT trace_id, $2 FROM tracker_traces WHERE trace_id = ANY($1::text[]) AND ${experimentInWorkspace('experiment_id', '$3')}
     ON CONFLICT DO NOTHING`,
    [traceIds, runId, requestWorkspace()],
  );
}
