import type { Database, Sql } from '../../platform/db/index.ts';
import { activeExperiment } from '../experiments/load.ts';
import { groupBy, writeKeyValues } from '../rows.ts';
import type { KeyValue } from '../wire/fields.ts';
import { type AnyValue, anyValueFromJson, anyValueOf, type Attribute, type OtlpSpan } from './otlp.ts';
import { SPAN_INPUTS, SPAN_OUTPUTS, SPAN_TYPE, withMlflowAttributes } from './otel-conventions.ts';
import { dumpAnyValue } from './py-json.ts';
import { traceNotFound } from './load.ts';
import { ARTIFACT_TAG, artifactLocationOf } from './store.ts';
import { carriesUsage, TOKEN_USAGE_METADATA, traceTokenUsage } from './token-usage.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import { REQUEST_ID_ATTRIBUTE as SVC_REQUEST_ID } from '../../platform/tracing.ts';

// Spans arriving over OTLP, kept as MLflow's SQL store keeps them (log_spans): a trace's info row is created from
// its spans when the client has not started it yet (start time, duration, state from the root span), spans are
// written again on a retry, and the trace is marked as holding its spans in the tracking store, which tells the
// client to read them back through traces/get rather than from a traces.json artifact.

export const SPANS_LOCATION_TAG = 'mlflow.trace.spansLocation';
export const TRACKING_STORE = 'TRACKING_STORE';
/** Set by StartTraceV3: its times and previews are the client's, and spans no longer widen them. */
export const FINALIZED_METADATA = 'mlflow.trace.infoFinalized';
const REQUEST_ID_ATTRIBUTE = 'mlflow.traceRequestId';
const TRACE_TAG_PREFIX = 'mlflow.traceTag.';
const PREVIEW_MAX = 1000;

/** MLflow's trace id for an OpenTelemetry trace id. */
export const mlflowTraceId = (otelTraceId: string) => `tr-${otelTraceId}`;

const STATUS_ERROR = 2;
const nsToMs = (ns: string) => Number(BigInt(ns) / 1_000_000n);
const attr = (attrs: Attribute[], key: string) => attrs.find((a) => a.key === key)?.value;

function preview(value: Attribute['value'] | undefined): string | null {
  if (!value) return null;
  const text = dumpAnyValue(value);
  return text.length <= PREVIEW_MAX ? text : `${text.slice(0, PREVIEW_MAX - 3)}...`;
}

const tagValue = (v: Attribute['value']) => {
  const value = anyValueOf(v);
  return typeof value === 'string' ? value : dumpAnyValue(v);
};

/** What the trace row learns from one batch of its spans (their attributes as kept). */
function summarise(spans: OtlpSpan[]) {
  const starts = spans.map((s) => nsToMs(s.startTimeUnixNano));
  const ends = spans.flatMap((s) => (s.endTimeUnixNano ? [nsToMs(s.endTimeUnixNano)] : []));
  const root = spans.find((s) => !s.parentSpanId);
  const tags: KeyValue[] = [];
  for (const a of spans[0]?.resource ?? []) {
    if (!a.key.startsWith('telemetry.sdk.') && !a.key.startsWith('mlflow.')) tags.push({ key: a.key, value: tagValue(a.value) });
  }
  for (const a of root?.attributes ?? []) {
    if (a.key.startsWith(TRACE_TAG_PREFIX) && a.key.length > TRACE_TAG_PREFIX.length) {
      tags.push({ key: a.key.slice(TRACE_TAG_PREFIX.length), value: tagValue(a.value) });
    }
  }
  const first = (key: string) => spans.map((s) => anyValueOf(attr(s.attributes, key))).find((v) => v !== null && v !== undefined);
  const userId = first('user.id');
  const sessionId = first('session.id') ?? first('gen_ai.conversation.id');
  const requestId = root ? anyValueOf(attr(root.attributes, SVC_REQUEST_ID)) : null;
  return {
    minStart: Math.min(...starts),
    maxEnd: ends.length ? Math.max(...ends) : null,
    rootState: root ? (root.statusCode === STATUS_ERROR ? 'ERROR' : 'OK') : null,
    requestPreview: root ? preview(attr(root.attributes, SPAN_INPUTS)) : null,
    responsePreview: root ? preview(attr(root.attributes, SPAN_OUTPUTS)) : null,
    tags,
    userId: userId === undefined ? undefined : String(userId),
    sessionId: sessionId === undefined ? undefined : String(sessionId),
    clientRequestId: typeof requestId === 'string' ? requestId : null,
  };
}

/**
 * A string attribute holding JSON text of an object, a list or a string is kept as that value: MLflow's store strips
 * that one layer of encoding (sanitize_attributes), so an OpenTelemetry client that sets mlflow.spanInputs to JSON
 * text reads back the structure, as MLflow's own client sends it.
 */
function unwrapJsonText(value: AnyValue): AnyValue {
  if (typeof value.stringValue !== 'string') return value;
  try {
    const parsed = JSON.parse(value.stringValue);
    return typeof parsed === 'string' || (parsed !== null && typeof parsed === 'object') ? anyValueFromJson(parsed) : value;
  } catch {
    return value;
  }
}

/**
 * The span as kept: JSON text unwrapped, MLflow's attributes added from the OpenTelemetry convention it follows, and
 * the request id a client sent replaced with the one the trace id gives, as MLflow does.
 */
function keptSpan(span: OtlpSpan, traceId: string): OtlpSpan {
  const attributes = span.attributes
    .filter((a) => a.key !== REQUEST_ID_ATTRIBUTE)
    .map((a) => ({ key: a.key, value: unwrapJsonText(a.value) }));
  return { ...span, attributes: [...withMlflowAttributes(attributes), { key: REQUEST_ID_ATTRIBUTE, value: { stringValue: traceId } }] };
}

async function writeSpans(tx: Sql, traceId: string, spans: OtlpSpan[]): Promise<void> {
  const rows = spans.map((s) => ({
    span_id: s.spanId,
    otel_trace_id: s.otelTraceId,
    parent_span_id: s.parentSpanId ?? null,
    name: s.name,
    span_type: (() => {
      const t = anyValueOf(attr(s.attributes, SPAN_TYPE));
      return typeof t === 'string' ? t : null;
    })(),
    kind: s.kind,
    trace_state: s.traceState ?? null,
    flags: s.flags ?? null,
    status_code: s.statusCode,
    status_message: s.statusMessage ?? null,
    start_time_unix_nano: s.startTimeUnixNano,
    end_time_unix_nano: s.endTimeUnixNano ?? null,
    attributes: s.attributes,
    events: s.events,
    links: s.links,
  }));
  await tx.query(
    `INSERT INTO tracker_spans (trace_id, span_id, otel_trace_id, parent_span_id, name, span_type, kind, trace_state, flags,
       status_code, status_message, start_time_unix_nano, end_time_unix_nano, attributes, events, links)
     SELECT $1, r.span_id, r.otel_trace_id, r.parent_span_id, r.name, r.span_type, r.kind, r.trace_state, r.flags,
       r.status_code, r.status_message, r.start_time_unix_nano::bigint, r.end_time_unix_nano::bigint, r.attributes, r.events, r.links
     FROM jsonb_to_recordset($2::jsonb) AS r(span_id text, otel_trace_id text, parent_span_id text, name text, span_type text,
       kind integer, trace_state text, flags bigint, status_code integer, status_message text, start_time_unix_nano text,
       end_time_unix_nano text, attributes jsonb, events jsonb, links jsonb)
     ON CONFLICT (trace_id, span_id) DO UPDATE SET otel_trace_id = EXCLUDED.otel_trace_id, parent_span_id = EXCLUDED.parent_span_id,
       name = EXCLUDED.name, span_type = EXCLUDED.span_type, kind = EXCLUDED.kind, trace_state = EXCLUDED.trace_state,
       flags = EXCLUDED.flags, status_code = EXCLUDED.status_code, status_message = EXCLUDED.status_message,
       start_time_unix_nano = EXCLUDED.start_time_unix_nano, end_time_unix_nano = EXCLUDED.end_time_unix_nano,
       attributes = EXCLUDED.attributes, events = EXCLUDED.events, links = EXCLUDED.links`,
    [traceId, JSON.stringify(rows)],
  );
}

type Existing = { trace_id: string; finalized: boolean };

/**
 * Keeps spans sent for an experiment (the x-mlflow-experiment-id header). A trace that does not exist yet is
 * created in that experiment; one that does keeps its experiment. One transaction for the whole request, as
 * MLflow's server takes a batch whole or not at all.
 */
export async function logSpans(db: Database, experimentId: number, spans: OtlpSpan[]): Promise<string[]> {
  const byTrace = groupBy(spans, (s) => mlflowTraceId(s.otelTraceId));
  const traceIds = [...byTrace.keys()].sort();
  const present = await db.query<{ trace_id: string }>(
    `SELECT trace_id FROM tracker_traces WHERE trace_id = ANY($1::text[]) AND ${experimentInWorkspace('experiment_id', '$2')}`,
    [traceIds, requestWorkspace()],
  );
  const known = new Set(present.map((r) => r.trace_id));
  // the experiment is checked (and its artifact location read) only when a trace has to be created
  const experiment = traceIds.some((id) => !known.has(id)) ? await activeExperiment(db, experimentId) : undefined;
  await db.transaction(async (tx) => {
    for (const traceId of traceIds) {
      const batch = byTrace.get(traceId)!.map((span) => keptSpan(span, traceId));
      const s = summarise(batch);
      if (experiment) {
        await tx.query(
          `INSERT INTO tracker_traces (trace_id, experiment_id, request_time, execution_duration, state)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT (trace_id) DO NOTHING`,
          [traceId, experimentId, s.minStart, s.maxEnd === null ? null : s.maxEnd - s.minStart, s.rootState ?? 'IN_PROGRESS'],
        );
        await writeKeyValues(tx, 'traceTags', [traceId], [{ key: ARTIFACT_TAG, value: artifactLocationOf(experiment, traceId) }], 'keep');
      }
      const [row] = await tx.query<Existing>(
        `SELECT t.trace_id, EXISTS (SELECT 1 FROM tracker_trace_metadata m WHERE m.trace_id = t.trace_id AND m.key = $2) AS finalized
         FROM tracker_traces t WHERE t.trace_id = $1 AND ${experimentInWorkspace('t.experiment_id', '$3')} FOR UPDATE`,
        [traceId, FINALIZED_METADATA, requestWorkspace()],
      );
      // deleted since it was looked up, and no experiment read to create it again
      if (!row) throw traceNotFound(traceId);
      await writeSpans(tx, traceId, batch);
      // A trace the client has not finalised spans the earliest start to the latest end of all its spans.
      await tx.query(
        `UPDATE tracker_traces SET
           request_time = CASE WHEN $2 THEN request_time ELSE LEAST(request_time, $3) END,
           execution_duration = CASE WHEN $2 OR $4::bigint IS NULL THEN execution_duration
             ELSE GREATEST(COALESCE(request_time + execution_duration, $4::bigint), $4::bigint) - LEAST(request_time, $3) END,
           state = CASE WHEN state IN ('IN_PROGRESS', 'STATE_UNSPECIFIED') AND $5::text IS NOT NULL THEN $5::text ELSE state END,
           request_preview = COALESCE(request_preview, $6),
           response_preview = COALESCE(response_preview, $7),
           client_request_id = COALESCE(client_request_id, $8)
         WHERE trace_id = $1`,
        [traceId, row.finalized, s.minStart, s.maxEnd, s.rootState, s.requestPreview, s.responsePreview, s.clientRequestId],
      );
      await writeKeyValues(tx, 'traceTags', [traceId], [{ key: SPANS_LOCATION_TAG, value: TRACKING_STORE }, ...s.tags]);
      const firstSeen: KeyValue[] = [
        ...(s.userId !== undefined ? [{ key: 'mlflow.trace.user', value: s.userId }] : []),
        ...(s.sessionId !== undefined ? [{ key: 'mlflow.trace.session', value: s.sessionId }] : []),
      ];
      await writeKeyValues(tx, 'traceMetadata', [traceId], firstSeen, 'keep');
      // the client's own figure stands once it has finalised the trace
      const usage = !row.finalized && carriesUsage(batch) ? await traceTokenUsage(tx, traceId) : undefined;
      if (usage) await writeKeyValues(tx, 'traceMetadata', [traceId], [{ key: TOKEN_USAGE_METADATA, value: usage }]);
    }
  });
  return traceIds;
}
