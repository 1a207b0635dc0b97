import { Worker } from 'node:worker_threads';
import type { Attributes } from '@opentelemetry/api';
import { Counter, Registry } from 'prom-client';
import { jsonText } from './json-text.mjs';

// Where finished spans go. A request records its spans as plain objects (tracing.ts); as each ends, its values are
// queued in one flat array, posted in batches to a worker thread (tracing-worker.mjs), where the spans get their ids
// and the OpenTelemetry SDK's batch processor and OTLP exporter serialise and send them. The thread that answers
// HTTP only copies them.

/** A span as a request records it: times on performance.now()'s clock; its number and its trace's (its root's). */
export type RecordedSpan = {
  readonly name: string;
  readonly scope: string;
  /** The number of the trace's root span: the worker makes the trace's id of it. */
  readonly trace: number;
  /** This span's number, unique in the process: the worker makes its id of it. */
  readonly n: number;
  readonly parent: RecordedSpan | undefined;
  readonly start: number;
  end: number;
  readonly attributes: Attributes;
  /**
   * Attributes whose values the export worker writes as JSON text (MLflow's inputs, outputs and token usage): the
   * values as given, serialised after the request and off its thread.
   */
  json: Record<string, unknown> | undefined;
  error?: unknown;
};

/**
 * Finished spans as handed over, flat (a copy of one array of plain values instead of an object a span): per span
 * SPAN_FIELDS values, in this order: name, scope, trace number, span number, parent's number (0: none), start, end
 * (milliseconds on performance.now()'s clock, which begins at `origin` since the epoch), attributes, error (as
 * plain data, or null), the attributes the worker writes as JSON text (or null). Ids are made of the numbers by the
 * worker (tracing-worker.mjs).
 */
export type SpanBatch = { origin: number; spans: unknown[] };
export const SPAN_FIELDS = 10;

/** Where records go: the export worker, or (in a benchmark) anything that takes them. */
export type Sink = {
  send(batch: SpanBatch): void;
  /** Resolves once what was sent so far has been exported or given up on. */
  flush(): Promise<void>;
  close(): Promise<void>;
};
let sink: Sink | undefined;

/** Sends finished spans to `to` from now on (undefined: tracing off, the no-op every span starts from). */
export function exportSpansTo(to: Sink | undefined): void {
  sink = to;
}
export const tracingOn = (): boolean => sink !== undefined;

/** `SVC_TRACING_ENABLED=true`: the export worker, sending to `endpoint` (or the SDK's default). */
export async function initTracing(serviceName: string, endpoint?: string, opts: { experimentId?: string | undefined } = {}): Promise<void> {
  if (sink) return;
  exportSpansTo(
    exportWorker({
      serviceName,
      ...(endpoint ? { url: `${endpoint.replace(/\/$/, '')}/v1/traces` } : {}),
      ...(opts.experimentId ? { headers: { 'x-mlflow-experiment-id': opts.experimentId } } : {}),
    }),
  );
}

/** The OTLP/HTTP export in a worker thread, for the service `serviceName`; the SDK's defaults where `url` is unset. */
export function exportWorker(target: { serviceName: string; url?: string; headers?: Record<string, string> }): Sink {
  const worker = new Worker(new URL('./tracing-worker.mjs', import.meta.url), { workerData: target });
  worker.unref(); // spans still queued do not keep a stopping process alive
  const flushes = new Map<number, () => void>();
  let lastFlush = 0;
  let stopped = false;
  worker.on('message', (msg: { outcome?: 'ok' | 'dropped'; count?: number; flushed?: number }) => {
    if (msg.outcome) spansSent.inc({ outcome: msg.outcome }, msg.count ?? 0);
    if (msg.flushed !== undefined) flushes.get(msg.flushed)?.();
  });
  const stop = () => {
    stopped = true;
    for (const done of flushes.values()) done();
  };
  // a worker that fails loses its spans, counted, and never the request's answer
  worker.on('error', stop);
  worker.on('exit', stop);
  return {
    send(batch) {
      if (stopped) spansSent.inc({ outcome: 'dropped' }, batch.spans.length / SPAN_FIELDS);
      else worker.postMessage(batch);
    },
    flush() {
      if (stopped) return Promise.resolve();
      const id = ++lastFlush;
      return new Promise<void>((resolve) => {
        flushes.set(id, () => {
          flushes.delete(id);
          resolve();
        });
        worker.postMessage({ flush: id });
      });
    },
    async close() {
      await this.flush();
      await worker.terminate();
    },
  };
}

// Spans are handed over in batches: at most every HAND_OVER_MS, or at once when HAND_OVER_SPANS are waiting. One
// message a span would cost the request's thread a copy and a wake-up of the worker each.
const HAND_OVER_MS = 100;
const HAND_OVER_SPANS = 256;
let pending: unknown[] = [];
let pendingTo: Sink | undefined;
let timer: NodeJS.Timeout | undefined;

let lastSpan = 0;
/** A new span's number: ids are made of it after the request, in the worker, not a random id a span on the path. */
export const spanNumber = (): number => ++lastSpan;

/** Queues a finished span for the sink tracing had when it began. */
export function finished(span: RecordedSpan): void {
  if (!sink) return;
  if (pendingTo !== sink) handOver();
  pendingTo = sink;
  const error = span.error === undefined ? null : errorOf(span.error);
  const parent = span.parent ? span.parent.n : 0;
  pending.push(span.name, span.scope, span.trace, span.n, parent, span.start, span.end, span.attributes, error, span.json ?? null);
  // never on the request's own turn: a full batch goes at the next turn of the loop, the rest on the timer
  if (pending.length === HAND_OVER_SPANS * SPAN_FIELDS) setImmediate(handOver);
  else timer ??= setTimeout(handOver, HAND_OVER_MS).unref();
}

/** Sends what is queued now, and resolves once the sink has exported it (a benchmark's or a test's wait). */
export function flushSpans(): Promise<void> {
  handOver();
  return sink ? sink.flush() : Promise.resolve();
}

function handOver(): void {
  if (timer) clearTimeout(timer);
  timer = undefined;
  const [spans, to] = [pending, pendingTo];
  pending = [];
  if (!to || !spans.length) return;
  try {
    to.send({ origin: performance.timeOrigin, spans });
  } catch {
    // a value the worker cannot be handed (a function, say): this batch's JSON is written here, as JSON.stringify would
    try {
      to.send({ origin: performance.timeOrigin, spans: withJsonWritten(spans) });
    } catch {
      spansSent.inc({ outcome: 'dropped' }, spans.length / SPAN_FIELDS);
    }
  }
}

/** The batch with the attributes meant as JSON text written as such, here (the worker then has none to write). */
function withJsonWritten(spans: unknown[]): unknown[] {
  for (let at = 0; at < spans.length; at += SPAN_FIELDS) {
    const json = spans[at + 9] as Record<string, unknown> | null;
    if (!json) continue;
    const attributes = spans[at + 7] as Attributes;
    for (const key of Object.keys(json)) attributes[key] = jsonText(json[key]);
    spans[at + 9] = null;
  }
  return spans;
}

function errorOf(error: unknown): { type: string; message: string | undefined; stack: string | undefined } {
  const e = error as { name?: string; code?: unknown; message?: string; stack?: string };
  return { type: String(e.code ?? e.name ?? 'Error'), message: e.message || undefined, stack: e.stack || undefined };
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
/** The export counters in Prometheus' text format; empty while tracing is off. */
export const tracingMetrics = async (): Promise<string> => (sink ? exportRegistry.metrics() : '');
