import { context, INVALID_SPAN_CONTEXT, trace, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import { Counter, Registry } from 'prom-client';

// Spans go through the OpenTelemetry API, which is a no-op until `initTracing` registers a provider
// (SVC_TRACING_ENABLED=true), so the hot path pays nothing when tracing is off.
let started = false;

/** `experimentId`: the tracker experiment the spans go to (MLflow's OTLP header), when the endpoint is a tracker. */
export async function initTracing(serviceName: string, endpoint?: string, opts: { experimentId?: string | undefined } = {}): Promise<void> {
  if (started) return;
  started = true;
  const { NodeTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-node');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const exporter = new OTLPTraceExporter({
    ...(endpoint ? { url: `${endpoint.replace(/\/$/, '')}/v1/traces` } : {}),
    ...(opts.experimentId ? { headers: { 'x-mlflow-experiment-id': opts.experimentId } } : {}),
  });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor(countingExports(exporter))],
  });
  provider.register();
}

// What happened to the spans sent off, on every service's /metrics: a tracker that is down loses spans, counted
// here, and never fails or slows the request they belong to (the batch processor sends them off its path).
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
export const tracingMetrics = async (): Promise<string> => (started ? exportRegistry.metrics() : '');

export const tracer = (service: string): Tracer => trace.getTracer(service);

/** Runs `fn` inside a span named `name` (of MLflow's span `type`); records the error and rethrows. */
export async function inSpan<T>(t: Tracer, name: string, fn: (span: Span) => Promise<T>, type?: SpanType): Promise<T> {
  return t.startActiveSpan(name, async (span) => {
    if (type && span.isRecording()) span.setAttribute(SPAN_TYPE, type);
    try {
      return await fn(span);
    } catch (err) {
      markFailed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

function markFailed(span: Span, err: unknown): void {
  span.recordException(err as Error);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

const UNTRACED = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
/**
 * A span only within a request's trace: a model call made for an upload or a background job runs untraced, where a
 * trace of its own would have no user to belong to.
 */
export const inTracedSpan = <T>(t: Tracer, name: string, fn: (span: Span) => Promise<T>, type?: SpanType): Promise<T> =>
  trace.getActiveSpan() ? inSpan(t, name, fn, type) : fn(UNTRACED);

// What MLflow reads from the spans of a trace (its OTLP ingest and UI): the span's kind of work, its inputs and
// outputs as JSON text, a chat model's token usage, and on the root span who asked (OpenTelemetry's user.id and
// session.id, which become the trace's mlflow.trace.user and mlflow.trace.session).
export const SPAN_TYPE = 'mlflow.spanType';
const SPAN_INPUTS = 'mlflow.spanInputs';
const SPAN_OUTPUTS = 'mlflow.spanOutputs';
const TOKEN_USAGE = 'mlflow.chat.tokenUsage';
/** svc's own: the request id, which the tracker keeps as the trace's client_request_id. */
export const REQUEST_ID_ATTRIBUTE = 'svc.request_id';

export type SpanType = 'CHAIN' | 'CHAT_MODEL' | 'EMBEDDING' | 'RETRIEVER' | 'PARSER' | 'TOOL' | 'UNKNOWN';

/** Inputs and outputs are serialised only when the span is exported (a no-op span costs nothing). */
export function describeSpan(span: Span, d: { type?: SpanType; inputs?: unknown; outputs?: unknown }): void {
  if (!span.isRecording()) return;
  if (d.type) span.setAttribute(SPAN_TYPE, d.type);
  if (d.inputs !== undefined) span.setAttribute(SPAN_INPUTS, JSON.stringify(d.inputs));
  if (d.outputs !== undefined) span.setAttribute(SPAN_OUTPUTS, JSON.stringify(d.outputs));
}

export type TokenUsage = { inputTokens: number; outputTokens: number; totalTokens: number };
export function recordTokenUsage(span: Span, usage: TokenUsage | undefined): void {
  if (!usage || !span.isRecording()) return;
  span.setAttributes({
    [TOKEN_USAGE]: JSON.stringify({ input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, total_tokens: usage.totalTokens }),
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
  });
}

/** Who made a request, and its id: what a request's trace is filed under. */
export type Requester = { user: string; requestId: string; sessionId?: string | undefined };

/** One request's trace: its root span, which the steps run under, ended once with what the request answered. */
export type RequestTrace = {
  /** Runs one part of the request under the trace; a part that fails ends the trace with its error. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Ends the trace with what the request answered. */
  end(outputs: unknown): void;
};

/**
 * Opens the trace of one request: a root span named `name` carrying who asked and the request id, so the tracker
 * files the trace under that user (whom alone, with administrators, the tracker lets read it). For a request whose
 * work outlives its handler (a streamed answer), `run` each part and `end` when the last is done.
 */
export function startRequestTrace(t: Tracer, name: string, who: Requester, inputs: unknown): RequestTrace {
  const root = t.startSpan(name, { root: true });
  if (root.isRecording()) {
    root.setAttributes({
      'user.id': who.user,
      [REQUEST_ID_ATTRIBUTE]: who.requestId,
      ...(who.sessionId ? { 'session.id': who.sessionId } : {}),
    });
    describeSpan(root, { type: 'CHAIN', inputs });
  }
  const active = trace.setSpan(context.active(), root);
  let ended = false;
  const end = (outcome: { outputs: unknown } | { error: unknown }) => {
    if (ended) return;
    ended = true;
    if ('error' in outcome) markFailed(root, outcome.error);
    else describeSpan(root, { outputs: outcome.outputs });
    root.end();
  };
  return {
    async run(fn) {
      try {
        return await context.with(active, fn);
      } catch (error) {
        end({ error });
        throw error;
      }
    },
    end: (outputs) => end({ outputs }),
  };
}

/** `fn` as one request's trace, its outputs what `outputsOf` makes of the result (never more than the caller got). */
export async function inRequestTrace<T>(
  t: Tracer,
  name: string,
  who: Requester,
  inputs: unknown,
  fn: () => Promise<T>,
  outputsOf: (result: T) => unknown,
): Promise<T> {
  const root = startRequestTrace(t, name, who, inputs);
  const result = await root.run(fn);
  root.end(outputsOf(result));
  return result;
}
