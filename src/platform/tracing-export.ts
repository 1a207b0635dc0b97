import { Worker } from 'node:worker_threads';
import type { Attributes } from '@opentelemetry/api';
import { Counter, Registry } from 'prom-client';

// Where finished spans go. A request records its spans as plain objects (tracing.ts); after it, they are flattened
// to records with their ids and posted in batches to a worker thread (tracing-worker.mjs), where the OpenTelemetry
// SDK's batch processor and OTLP exporter serialise and send them. The thread that answers HTTP only copies them.

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

/** A finished span as handed over: hex ids, times in milliseconds since the epoch, the error as plain data. */
export type SpanRecord = {
  name: string;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  start: number;
  end: number;
  attributes: Attributes;
  error: { type: string; message: string | undefined; stack: string | undefined } | undefined;
};

/** Where records go: the export worker, or (in a benchmark) anything that takes them. */
export type Sink = {
  send(spans: SpanRecord[]): void;
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
    send(spans) {
      if (stopped) spansSent.inc({ outcome: 'dropped' }, spans.length);
      else worker.postMessage({ spans });
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
const HAND_OVER_MS = 20;
const HAND_OVER_SPANS = 256;
let pending: RecordedSpan[] = [];
let pendingTo: Sink | undefined;
let timer: NodeJS.Timeout | undefined;

/** Queues a finished span for the sink tracing had when it began. */
export function finished(span: RecordedSpan): void {
  if (!sink) return;
  if (pendingTo !== sink) handOver();
  pendingTo = sink;
  pending.push(span);
  // never on the request's own turn: a full batch goes at the next turn of the loop, the rest on the timer
  if (pending.length === HAND_OVER_SPANS) setImmediate(handOver);
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
  if (to && spans.length) to.send(spans.map(recordOf));
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

// One shape for every record (no optional parts spread in): building and copying them is the hand-over's cost.
function recordOf(span: RecordedSpan): SpanRecord {
  return {
    name: span.name,
    scope: span.scope,
    traceId: traceIdOf(span),
    spanId: idOf(span),
    parentSpanId: span.parent ? idOf(span.parent) : undefined,
    start: performance.timeOrigin + span.start,
    end: performance.timeOrigin + span.end,
    attributes: span.attributes,
    error: span.error === undefined ? undefined : errorOf(span.error),
  };
}

function errorOf(error: unknown): NonNullable<SpanRecord['error']> {
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
