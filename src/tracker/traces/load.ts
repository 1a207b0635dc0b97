import type { Sql } from '../../platform/db/index.ts';
import { doesNotExist } from '../errors.ts';
import { groupBy } from '../rows.ts';
import type { KeyValue } from '../wire/fields.ts';
import { assessmentsOf, type AssessmentJson } from './assessment-rows.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import type { TraceState } from './messages.ts';

// Reading traces: TraceInfo in MLflow 3's shape (v3) and in the deprecated v2 shape, for any number of ids in
// four statements, in the order asked for.

type TraceRow = {
  trace_id: string;
  experiment_id: number;
  client_request_id: string | null;
  request_time: number;
  execution_duration: number | null;
  state: TraceState;
  request_preview: string | null;
  response_preview: string | null;
};

export type TraceInfo = TraceRow & { metadata: KeyValue[]; tags: KeyValue[]; assessments: AssessmentJson[] };

export const traceNotFound = (id: string) => doesNotExist(`Trace with ID ${id} is not found.`);

export async function loadTraces(db: Sql, ids: string[]): Promise<TraceInfo[]> {
  if (ids.length === 0) return [];
  type Keyed = KeyValue & { trace_id: string };
  const [rows, tags, metadata, assessments] = await Promise.all([
    db.query<TraceRow>(
      `SELECT trace_id, experiment_id, client_request_id, request_time, execution_duration, state, request_preview, response_preview
       FROM tracker_traces WHERE trace_id = ANY($1::text[]) AND ${experimentInWorkspace('experiment_id', '$2')}`,
      [ids, requestWorkspace()],
    ),
    db.query<Keyed>(`SELECT trace_id, key, value FROM tracker_trace_tags WHERE trace_id = ANY($1::text[]) ORDER BY key`, [ids]),
    db.query<Keyed>(`SELECT trace_id, key, value FROM tracker_trace_metadata WHERE trace_id = ANY($1::text[]) ORDER BY key`, [ids]),
    assessmentsOf(db, ids),
  ]);
  const byId = new Map(rows.map((r) => [r.trace_id, r]));
  const tagsOf = groupBy(tags, (t) => t.trace_id);
  const metadataOf = groupBy(metadata, (t) => t.trace_id);
  const kv = (list: Keyed[] | undefined) => (list ?? []).map(({ key, value }) => ({ key, value }));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [{ ...row, tags: kv(tagsOf.get(id)), metadata: kv(metadataOf.get(id)), assessments: assessments.get(id) ?? [] }] : [];
  });
}

export async function getTrace(db: Sql, id: string): Promise<TraceInfo> {
  const [trace] = await loadTraces(db, [id]);
  if (!trace) throw traceNotFound(id);
  return trace;
}

const asMap = (pairs: KeyValue[]) => Object.fromEntries(pairs.map((p) => [p.key, p.value]));

/** TraceInfo (v3) as protobuf's JSON writes it: a Timestamp as RFC 3339, a Duration in seconds, maps as objects. */
export function traceInfoV3(t: TraceInfo) {
  return {
    trace_id: t.trace_id,
    ...(t.client_request_id ? { client_request_id: t.client_request_id } : {}),
    trace_location: { type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: String(t.experiment_id) } },
    ...(t.request_preview ? { request_preview: t.request_preview } : {}),
    ...(t.response_preview ? { response_preview: t.response_preview } : {}),
    request_time: new Date(Number(t.request_time)).toISOString(),
    ...(t.execution_duration !== null ? { execution_duration: `${Number(t.execution_duration) / 1000}s` } : {}),
    state: t.state,
    trace_metadata: asMap(t.metadata),
    tags: asMap(t.tags),
    ...(t.assessments.length ? { assessments: t.assessments } : {}),
  };
}

/** TraceInfo (v2), for the deprecated endpoints. */
export function traceInfoV2(t: TraceInfo) {
  return {
    request_id: t.trace_id,
    experiment_id: String(t.experiment_id),
    timestamp_ms: Number(t.request_time),
    execution_time_ms: Number(t.execution_duration ?? 0),
    status: t.state === 'STATE_UNSPECIFIED' ? 'TRACE_STATUS_UNSPECIFIED' : t.state,
    request_metadata: t.metadata,
    tags: t.tags,
  };
}
