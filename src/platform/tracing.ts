import type { Attributes } from '@opentelemetry/api';
import { type OpenTrace, requestScope } from './request-scope.ts';
import { finished, type RecordedSpan, spanNumber, tracingOn } from './tracing-export.ts';

export { initTracing, tracingMetrics } from './tracing-export.ts';

// A request's spans are recorded here as plain objects: a name, two readings of the clock and the attributes. The
// OpenTelemetry SDK's own spans cost about 9 µs of CPU each on the request's path (the sampler, its self-metrics, a
// context copy per span), a tenth of a millisecond for a question's eleven; the SDK's batch processor and OTLP
// exporter still send them, after the request (tracing-export.ts). While tracing is off (SVC_TRACING_ENABLED unset),
// every function here just runs its work.
//
// A request's open trace is a field of the request's own scope (request-scope.ts), the one async context frame the
// HTTP app enters a request whether tracing is on or off: tracing enters none of its own on a request's path (a
// frame a span was a third of its cost; an empty frame around a question measured 0.16 ms at p50 against none).
// Only work outside any request (a benchmark, a test, a job) enters a frame for its trace. A step's parent is the
// trace's current span, which the step replaces while it runs: right for steps that run one after another or
// nested, as every request's do. Two spans running at once in one request (started together, as Promise.all would)
// would nest the second under the first; a step run in parallel should stay one span.

/** Whose spans these are: the service, exported as the instrumentation scope. */
export type Tracer = { readonly scope: string };
export const tracer = (service: string): Tracer => ({ scope: service });

/** A span being recorded, or none (tracing off, or a model call outside any request's trace). */
export type TraceSpan = RecordedSpan | undefined;

function open(t: Tracer, name: string, parent: RecordedSpan | undefined): RecordedSpan {
  const n = spanNumber();
  const start = performance.now();
  return { name, scope: t.scope, trace: parent ? parent.trace : n, n, parent, start, end: 0, attributes: {}, json: undefined };
}
function close(span: RecordedSpan, error?: unknown): void {
  if (span.end) return;
  span.end = performance.now();
  if (error !== undefined) span.error = error;
  finished(span);
}
/** After `span` ends, later spans open under its nearest ancestor still open (or its root, which a late span joins). */
function leave(trace: OpenTrace, span: RecordedSpan): void {
  // only when the current span is `span` or one opened inside it (a span of a step that was not awaited)
  let at: RecordedSpan | undefined = trace.current;
  while (at && at !== span) at = at.parent;
  if (!at) return;
  let parent = span.parent;
  while (parent?.end && parent.parent) parent = parent.parent;
  if (parent) trace.current = parent;
}

/** Runs `fn` inside a span named `name` (of MLflow's span `type`), under the enclosing one; records the error and rethrows. */
export async function inSpan<T>(t: Tracer, name: string, fn: (span: TraceSpan) => Promise<T>, type?: SpanType): Promise<T> {
  if (!tracingOn()) return fn(undefined);
  const scope = requestScope.getStore();
  const trace = scope?.trace;
  // a span outside any trace begins one of its own, in a frame of its own (two such spans at once stay apart)
  if (!trace) return requestScope.run({ requestId: scope?.requestId, trace: { current: undefined } }, inSpan<T>, t, name, fn, type);
  const span = open(t, name, trace.current);
  if (type) span.attributes[SPAN_TYPE] = type;
  trace.current = span;
  try {
    const result = await fn(span);
    close(span);
    return result;
  } catch (err) {
    close(span, err);
    throw err;
  } finally {
    leave(trace, span);
  }
}

/**
 * A span only within a request's trace: a model call made for an upload or a background job runs untraced, where a
 * trace of its own would have no user to belong to.
 */
export const inTracedSpan = <T>(t: Tracer, name: string, fn: (span: TraceSpan) => Promise<T>, type?: SpanType): Promise<T> =>
  tracingOn() && requestScope.getStore()?.trace ? inSpan(t, name, fn, type) : fn(undefined);

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

/**
 * Inputs and outputs, exported as JSON text. They are serialised after the request, by the export worker (a
 * question's prompt and ranked passages took 20 to 40 µs on the request's path): give values the request does not
 * change afterwards, as each caller does (a fresh object, or what was answered). Nothing is kept for a span not
 * recorded.
 */
export function describeSpan(span: TraceSpan, d: { type?: SpanType; inputs?: unknown; outputs?: unknown }): void {
  if (!span) return;
  if (d.type) span.attributes[SPAN_TYPE] = d.type;
  if (d.inputs !== undefined) (span.json ??= {})[SPAN_INPUTS] = d.inputs;
  if (d.outputs !== undefined) (span.json ??= {})[SPAN_OUTPUTS] = d.outputs;
}

export type TokenUsage = { inputTokens: number; outputTokens: number; totalTokens: number };
export function recordTokenUsage(span: TraceSpan, usage: TokenUsage | undefined): void {
  if (!usage || !span) return;
  (span.json ??= {})[TOKEN_USAGE] = { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, total_tokens: usage.totalTokens };
  span.attributes['gen_ai.usage.input_tokens'] = usage.inputTokens;
  span.attributes['gen_ai.usage.output_tokens'] = usage.outputTokens;
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

const UNTRACED: RequestTrace = { run: (fn) => fn(), end: () => {} };

/**
 * Opens the trace of one request: a root span named `name` carrying who asked and the request id, so the tracker
 * files the trace under that user (whom alone, with administrators, the tracker lets read it). For a request whose
 * work outlives its handler (a streamed answer), `run` each part and `end` when the last is done.
 */
export function startRequestTrace(t: Tracer, name: string, who: Requester, inputs: unknown): RequestTrace {
  if (!tracingOn()) return UNTRACED;
  const root = open(t, name, undefined);
  Object.assign<Attributes, Attributes>(root.attributes, {
    'user.id': who.user,
    [REQUEST_ID_ATTRIBUTE]: who.requestId,
    ...(who.sessionId ? { 'session.id': who.sessionId } : {}),
  });
  describeSpan(root, { type: 'CHAIN', inputs });
  const trace: OpenTrace = { current: root };
  return {
    async run(fn) {
      try {
        return await within(trace, fn);
      } catch (error) {
        close(root, error);
        throw error;
      }
    },
    end(outputs) {
      if (root.end) return;
      describeSpan(root, { outputs });
      close(root);
    },
  };
}

/**
 * Runs `fn` with `trace` open: the request's from now on, so that work of the request not awaited joins its trace as
 * it would in a frame of the trace's own. Outside any request (a benchmark, a job), or inside another trace, in a
 * frame of its own.
 */
function within<T>(trace: OpenTrace, fn: () => Promise<T>): Promise<T> {
  const scope = requestScope.getStore();
  if (!scope || (scope.trace && scope.trace !== trace)) return requestScope.run({ requestId: scope?.requestId, trace }, fn);
  scope.trace = trace;
  return fn();
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
  if (!tracingOn()) return fn(); // nor are the outputs made
  const root = startRequestTrace(t, name, who, inputs);
  const result = await root.run(fn);
  root.end(outputsOf(result));
  return result;
}
