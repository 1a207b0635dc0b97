import { createRequire } from 'node:module';
import { gunzipSync, inflateSync } from 'node:zlib';

// OTLP/HTTP trace export requests (ExportTraceServiceRequest) in either encoding the specification allows: binary
// protobuf and protobuf's JSON with hex ids. Decoding uses the protobufjs classes OpenTelemetry generated from
// opentelemetry-proto (shipped by @opentelemetry/otlp-transformer 0.216.0, pinned as otlp-transformer-protos), so
// no field number is written here. Both encodings end as the same plain spans, ids in lowercase hex.

type ProtoMessage = {
  decode(bytes: Uint8Array): unknown;
  fromObject(obj: unknown): unknown;
  toObject(msg: unknown, opts: Record<string, unknown>): unknown;
};
// The generated root (0.7 MB of code, about 140 ms to load) is loaded by the first export, not at every start.
let exportRequest: ProtoMessage | undefined;
function exportTraceServiceRequest(): ProtoMessage {
  exportRequest ??= createRequire(import.meta.url)('otlp-transformer-protos/build/src/generated/root.js').opentelemetry.proto.collector
    .trace.v1.ExportTraceServiceRequest as ProtoMessage;
  return exportRequest;
}

/** An OTLP AnyValue in protobuf's JSON (camelCase): one of stringValue, intValue (a decimal string), arrayValue... */
export type AnyValue = Record<string, unknown>;
export type Attribute = { key: string; value: AnyValue };
export type SpanEvent = { name: string; timeUnixNano: string; attributes: Attribute[] };
export type SpanLink = { traceId: string; spanId: string; traceState?: string; attributes: Attribute[] };

/** A span as received, ids in hex, times as decimal strings of Unix nanoseconds (beyond 2^53). */
export type OtlpSpan = {
  otelTraceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  traceState: string | undefined;
  flags: number | undefined;
  statusCode: number;
  statusMessage: string | undefined;
  startTimeUnixNano: string;
  endTimeUnixNano: string | undefined;
  attributes: Attribute[];
  events: SpanEvent[];
  links: SpanLink[];
  /** The attributes of the resource that sent it (service.name...). */
  resource: Attribute[];
};

/** A request MLflow's OTLP endpoint refuses, with its status and FastAPI's `detail`. */
export class OtlpError extends Error {
  constructor(
    readonly status: 400 | 415 | 422,
    message: string,
  ) {
    super(message);
  }
}

const MEDIA_TYPES = ['application/x-protobuf', 'application/json'] as const;
type MediaType = (typeof MEDIA_TYPES)[number];

export function otlpMediaType(contentType: string | undefined): MediaType {
  const media = contentType?.split(';')[0]?.trim().toLowerCase();
  if (!MEDIA_TYPES.includes(media as MediaType)) {
    throw new OtlpError(400, `Invalid Content-Type: ${contentType ?? 'None'}. Expected: application/x-protobuf or application/json`);
  }
  return media as MediaType;
}

/** The body as sent before compression; at most maxBytes once inflated (a small body can inflate to gigabytes). */
export function decompress(body: Uint8Array, encoding: string | undefined, maxBytes: number): Uint8Array {
  const e = encoding?.trim().toLowerCase();
  if (!e || e === 'identity') return body;
  try {
    if (e === 'gzip') return gunzipSync(body, { maxOutputLength: maxBytes });
    if (e === 'deflate') return inflateSync(body, { maxOutputLength: maxBytes });
  } catch {
    throw new OtlpError(400, `Failed to decompress the request body (${e}), or it inflates beyond ${maxBytes} bytes.`);
  }
  throw new OtlpError(400, `Unsupported Content-Encoding: ${encoding}. Expected gzip or deflate.`);
}

const hex = (b64: unknown) => (typeof b64 === 'string' && b64 ? Buffer.from(b64, 'base64').toString('hex') : '');

// OTLP's JSON writes trace and span ids in hex where protobuf's JSON mapping expects base64 for bytes.
const HEX_ID_FIELDS = ['traceId', 'spanId', 'parentSpanId'] as const;
function idsToBase64(record: Record<string, unknown>) {
  for (const f of HEX_ID_FIELDS) {
    const v = record[f];
    if (typeof v === 'string' && v) {
      if (!/^([0-9a-fA-F]{2})+$/.test(v)) throw new OtlpError(400, 'Invalid OpenTelemetry format');
      record[f] = Buffer.from(v, 'hex').toString('base64');
    }
  }
}

function fromJson(body: Uint8Array): unknown {
  let data: any;
  try {
    data = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    throw new OtlpError(400, 'Invalid OpenTelemetry format');
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new OtlpError(400, 'Invalid OpenTelemetry format');
  for (const rs of Array.isArray(data.resourceSpans) ? data.resourceSpans : []) {
    for (const ss of Array.isArray(rs?.scopeSpans) ? rs.scopeSpans : []) {
      for (const span of Array.isArray(ss?.spans) ? ss.spans : []) {
        if (span && typeof span === 'object') {
          idsToBase64(span);
          for (const link of Array.isArray(span.links) ? span.links : []) if (link && typeof link === 'object') idsToBase64(link);
        }
      }
    }
  }
  return exportTraceServiceRequest().fromObject(data);
}

const attributes = (list: unknown): Attribute[] =>
  (Array.isArray(list) ? list : []).map((a: any) => ({ key: String(a.key ?? ''), value: (a.value ?? {}) as AnyValue }));

/** Decodes a request body (already decompressed) into its spans; a body with no resource spans is refused. */
export function decodeOtlp(body: Uint8Array, media: MediaType): OtlpSpan[] {
  let request: any;
  try {
    const messages = exportTraceServiceRequest();
    const msg = media === 'application/json' ? fromJson(body) : messages.decode(body);
    request = messages.toObject(msg, { longs: String, enums: Number, bytes: String, defaults: false });
  } catch (err) {
    if (err instanceof OtlpError) throw err;
    throw new OtlpError(400, 'Invalid OpenTelemetry format');
  }
  const resourceSpans: any[] = request.resourceSpans ?? [];
  if (resourceSpans.length === 0) throw new OtlpError(400, 'Invalid OpenTelemetry format - no spans found');
  const spans: OtlpSpan[] = [];
  for (const rs of resourceSpans) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const otelTraceId = hex(s.traceId);
        const spanId = hex(s.spanId);
        if (!otelTraceId || !spanId || !s.startTimeUnixNano) throw new OtlpError(422, 'Cannot convert OpenTelemetry span to MLflow span');
        spans.push({
          otelTraceId,
          spanId,
          parentSpanId: hex(s.parentSpanId) || undefined,
          name: s.name ?? '',
          kind: s.kind ?? 0,
          traceState: s.traceState || undefined,
          flags: s.flags || undefined,
          statusCode: s.status?.code ?? 0,
          statusMessage: s.status?.message || undefined,
          startTimeUnixNano: String(s.startTimeUnixNano),
          endTimeUnixNano: s.endTimeUnixNano && s.endTimeUnixNano !== '0' ? String(s.endTimeUnixNano) : undefined,
          attributes: attributes(s.attributes),
          events: (s.events ?? []).map((e: any) => ({
            name: e.name ?? '',
            timeUnixNano: String(e.timeUnixNano ?? '0'),
            attributes: attributes(e.attributes),
          })),
          links: (s.links ?? []).map((l: any) => ({
            traceId: hex(l.traceId),
            spanId: hex(l.spanId),
            ...(l.traceState ? { traceState: l.traceState } : {}),
            attributes: attributes(l.attributes),
          })),
          resource,
        });
      }
    }
  }
  return spans;
}

/** An AnyValue as the value it carries (MLflow decodes attributes this way before it keeps them). */
export function anyValueOf(v: AnyValue | undefined): unknown {
  if (!v) return null;
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) {
    const n = Number(v.intValue);
    return Number.isSafeInteger(n) ? n : BigInt(String(v.intValue));
  }
  if ('doubleValue' in v) return v.doubleValue;
  if ('bytesValue' in v) return v.bytesValue;
  if ('arrayValue' in v) return (((v.arrayValue as any)?.values ?? []) as AnyValue[]).map(anyValueOf);
  if ('kvlistValue' in v) {
    return Object.fromEntries((((v.kvlistValue as any)?.values ?? []) as Attribute[]).map((kv) => [kv.key, anyValueOf(kv.value)]));
  }
  return null;
}

/** A JSON value as the AnyValue MLflow's client would have sent for it. */
export function anyValueFromJson(v: unknown): AnyValue {
  if (v === null || v === undefined) return {};
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValueFromJson) } };
  return { kvlistValue: { values: Object.entries(v).map(([key, x]) => ({ key, value: anyValueFromJson(x) })) } };
}
