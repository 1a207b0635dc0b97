import type { Sql } from '../../platform/db/index.ts';
import { groupBy } from '../rows.ts';
import type { AnyValue, Attribute, SpanEvent, SpanLink } from './otlp.ts';
import { anyValueOf } from './otlp.ts';
import { dumpAnyValue } from './py-json.ts';

// Reading spans back in the two shapes MLflow answers with: OpenTelemetry's Span in protobuf JSON (traces/get,
// batchGet: MLflow writes proto field names, bytes in base64) and MLflow's own span dictionary (the trace data
// artifact, traces.json: ids in base64, each attribute as the JSON text MLflow keeps). Root spans first, then by
// start time, as MLflow orders them.

export type SpanRow = {
  trace_id: string;
  span_id: string;
  otel_trace_id: string;
  parent_span_id: string | null;
  name: string;
  kind: number;
  trace_state: string | null;
  flags: number | null;
  status_code: number;
  status_message: string | null;
  start_time_unix_nano: string;
  end_time_unix_nano: string | null;
  attributes: Attribute[];
  events: SpanEvent[];
  links: SpanLink[];
};

export async function loadSpans(db: Sql, traceIds: string[]): Promise<Map<string, SpanRow[]>> {
  if (traceIds.length === 0) return new Map();
  const rows = await db.query<SpanRow>(
    `SELECT trace_id, span_id, otel_trace_id, parent_span_id, name, kind, trace_state, flags, status_code, status_message,
       start_time_unix_nano::text AS start_time_unix_nano, end_time_unix_nano::text AS end_time_unix_nano, attributes, events, links
     FROM tracker_spans WHERE trace_id = ANY($1::text[])
     ORDER BY trace_id, parent_span_id IS NOT NULL, start_time_unix_nano, span_id`,
    [traceIds],
  );
  return groupBy(rows, (r) => r.trace_id);
}

const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
const KINDS = [
  'SPAN_KIND_UNSPECIFIED',
  'SPAN_KIND_INTERNAL',
  'SPAN_KIND_SERVER',
  'SPAN_KIND_CLIENT',
  'SPAN_KIND_PRODUCER',
  'SPAN_KIND_CONSUMER',
];
const STATUS_CODES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];

/** protobuf JSON with proto field names: stringValue -> string_value, throughout an AnyValue. */
function snake(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snake);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
      // an integer as MLflow writes it, a JSON number, while it is exact in one
      k === 'intValue' && Number.isSafeInteger(Number(v)) ? Number(v) : snake(v),
    ]),
  );
}
const protoAttributes = (attrs: Attribute[]) => attrs.map((a) => ({ key: a.key, value: snake(a.value) }));

/** An OpenTelemetry Span (opentelemetry.proto.trace.v1.Span) in protobuf JSON. */
export function otelSpanJson(s: SpanRow) {
  return {
    trace_id: b64(s.otel_trace_id),
    span_id: b64(s.span_id),
    ...(s.trace_state ? { trace_state: s.trace_state } : {}),
    ...(s.parent_span_id ? { parent_span_id: b64(s.parent_span_id) } : {}),
    ...(s.flags ? { flags: Number(s.flags) } : {}),
    name: s.name,
    kind: KINDS[s.kind] ?? 'SPAN_KIND_UNSPECIFIED',
    start_time_unix_nano: s.start_time_unix_nano,
    ...(s.end_time_unix_nano ? { end_time_unix_nano: s.end_time_unix_nano } : {}),
    attributes: protoAttributes(s.attributes),
    events: s.events.map((e) => ({ time_unix_nano: e.timeUnixNano, name: e.name, attributes: protoAttributes(e.attributes) })),
    links: s.links.map((l) => ({
      trace_id: b64(l.traceId),
      span_id: b64(l.spanId),
      ...(l.traceState ? { trace_state: l.traceState } : {}),
      attributes: protoAttributes(l.attributes),
    })),
    // protobuf JSON leaves defaults out, as MLflow's answer does: an unset status is {}
    status: {
      ...(s.status_message ? { message: s.status_message } : {}),
      ...(s.status_code ? { code: STATUS_CODES[s.status_code] ?? 'STATUS_CODE_UNSET' } : {}),
    },
  };
}

// Nanoseconds beyond 2^53 must reach the JSON as integers: they travel as marked strings and are unquoted last.
const NANOS = '\u0000ns:';
const nanos = (ns: string | null) => (ns === null ? null : `${NANOS}${ns}`);
const unquoteNanos = (json: string) => json.replace(/"\\u0000ns:(\d+)"/g, '$1');

const decodedAttributes = (attrs: Attribute[]) => Object.fromEntries(attrs.map((a) => [a.key, jsonSafe(anyValueOf(a.value as AnyValue))]));
const jsonSafe = (v: unknown): unknown =>
  typeof v === 'bigint'
    ? Number(v)
    : Array.isArray(v)
      ? v.map(jsonSafe)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonSafe(x)]))
        : v;

/** MLflow's span dictionary (Span.to_dict), as traces.json holds it. */
function spanDict(s: SpanRow) {
  return {
    trace_id: b64(s.otel_trace_id),
    span_id: b64(s.span_id),
    parent_span_id: s.parent_span_id ? b64(s.parent_span_id) : null,
    name: s.name,
    start_time_unix_nano: nanos(s.start_time_unix_nano),
    end_time_unix_nano: nanos(s.end_time_unix_nano),
    events: s.events.map((e) => ({ name: e.name, time_unix_nano: nanos(e.timeUnixNano), attributes: decodedAttributes(e.attributes) })),
    status: { code: STATUS_CODES[s.status_code] ?? 'STATUS_CODE_UNSET', message: s.status_message ?? '' },
    attributes: Object.fromEntries(s.attributes.map((a) => [a.key, dumpAnyValue(a.value)])),
    links: s.links.map((l) => ({ trace_id: `tr-${l.traceId}`, span_id: l.spanId, attributes: decodedAttributes(l.attributes) })),
  };
}

/** The trace data artifact (TraceData.to_json_bytes): {"spans": [...]}. */
export const traceDataJson = (spans: SpanRow[]) => unquoteNanos(JSON.stringify({ spans: spans.map(spanDict) }));
