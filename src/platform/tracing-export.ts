import { type Attributes, type HrTime, type SpanContext, SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { Counter, Registry } from 'prom-client';

// Where finished spans go: the OpenTelemetry SDK's batch processor and OTLP exporter, which batch, serialise and send
// them off the request path. A request records its spans as plain objects (tracing.ts); they become the SDK's
// ReadableSpans here, after the request, in one pass a turn of the event loop.

/** A span as a request records it: times on performance.now()'s clock, ids given when it is handed over. */
export type RecordedSpan = {
  readonly name: string;
  readonly scope: string;
  readonly trace: { id?: string };
  readonly parent: RecordedSpan | undefined;
  readonly start: number;
  end: number;
  readonly attributes: Attributes;
  error?: unknown;
  id?: string;
};

/** The processor finished spans go to, and the resource (service.name) they are exported under. */
export type Sink = { processor: SpanProcessor; resource: Resource };
let sink: Sink | undefined;

/** Sends finished spans to `processor` from now on (undefined: tracing off, the no-op every span starts from). */
export function exportSpansTo(to: Sink | undefined): void {
  sink = to;
}
export const tracingOn = (): boolean => sink !== undefined;

/** `SVC_TRACING_ENABLED=true`: the batch processor and OTLP/HTTP exporter, sending to `endpoint` (or the SDK's default). */
export async function initTracing(serviceName: string, endpoint?: string, opts: { experimentId?: string | undefined } = {}): Promise<void> {
  if (sink) return;
  const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-node');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const exporter = new OTLPTraceExporter({
    ...(endpoint ? { url: `${endpoint.replace(/\/$/, '')}/v1/traces` } : {}),
    ...(opts.experimentId ? { headers: { 'x-mlflow-experiment-id': opts.experimentId } } : {}),
  });
  exportSpansTo({
    processor: new BatchSpanProcessor(countingExports(exporter)),
    resource: resourceFromAttributes({ 'service.name': serviceName }),
  });
}

let pending: RecordedSpan[] = [];
let pendingTo: Sink | undefined;
/** Queues a finished span; the queue is handed over once the current turn of the event loop is done. */
export function finished(span: RecordedSpan): void {
  if (!sink) return;
  if (pending.length === 0) {
    pendingTo = sink;
    setImmediate(handOver);
  }
  pending.push(span);
}

function handOver(): void {
  const [spans, to] = [pending, pendingTo];
  pending = [];
  if (to) for (const span of spans) to.processor.onEnd(readable(span, to.resource));
}

// Ids need only be unique, not secret (as the SDK's own generator): crypto.randomBytes, a call into OpenSSL per id,
// was a third of handing spans over.
const HEX = '0123456789abcdef';
function randomHex(digits: number): string {
  let id = HEX[1 + Math.floor(Math.random() * 15)]!; // never all zeros, which OpenTelemetry reads as no id
  for (let i = 1; i < digits; i++) id += HEX[Math.floor(Math.random() * 16)];
  return id;
}
const idOf = (span: RecordedSpan) => (span.id ??= randomHex(16));
const traceIdOf = (span: RecordedSpan) => (span.trace.id ??= randomHex(32));
const contextOf = (span: RecordedSpan): SpanContext => ({
  traceId: traceIdOf(span),
  spanId: idOf(span),
  traceFlags: TraceFlags.SAMPLED,
  isRemote: false,
});
const hrTime = (ms: number): HrTime => {
  const whole = Math.floor(ms / 1000);
  return [whole, Math.min(999_999_999, Math.round((ms - whole * 1000) * 1e6))];
};

function readable(span: RecordedSpan, resource: Resource): ReadableSpan {
  const context = contextOf(span);
  const error = span.error as { name?: string; code?: unknown; message?: string; stack?: string } | undefined;
  const startTime = hrTime(performance.timeOrigin + span.start);
  return {
    name: span.name,
    kind: SpanKind.INTERNAL,
    spanContext: () => context,
    ...(span.parent ? { parentSpanContext: contextOf(span.parent) } : {}),
    startTime,
    endTime: hrTime(performance.timeOrigin + span.end),
    duration: hrTime(span.end - span.start),
    status: { code: error ? SpanStatusCode.ERROR : SpanStatusCode.UNSET },
    attributes: span.attributes,
    links: [],
    // as the SDK's recordException writes it
    events: error
      ? [
          {
            name: 'exception',
            time: hrTime(performance.timeOrigin + span.end),
            attributes: {
              'exception.type': String(error.code ?? error.name ?? 'Error'),
              ...(error.message ? { 'exception.message': error.message } : {}),
              ...(error.stack ? { 'exception.stacktrace': error.stack } : {}),
            },
          },
        ]
      : [],
    ended: true,
    resource,
    instrumentationScope: { name: span.scope },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

// What happened to the spans sent off, on every service's /metrics: a tracker that is down loses spans, counted
// here, and never fails or slows the request they belong to.
const exportRegistry = new Registry();
const spansSent = new Counter({
  name: 'svc_trace_spans_exported_total',
  help: 'Spans the OTLP exporter sent, by outcome (ok, dropped: the receiver refused them or could not be reached)',
  labelNames: ['outcome'] as const,
  registers: [exportRegistry],
});
const SUCCESS = 0; // ExportResultCode.SUCCESS of @opentelemetry/core

/** The exporter, with each batch's outcome counted. */
function countingExports(exporter: SpanExporter): SpanExporter {
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        spansSent.inc({ outcome: result.code === SUCCESS ? 'ok' : 'dropped' }, spans.length);
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/** The export counters in Prometheus' text format; empty while tracing is off. */
export const tracingMetrics = async (): Promise<string> => (sink ? exportRegistry.metrics() : '');
