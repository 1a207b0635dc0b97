// The export of finished spans, in a worker thread of its own (tracing-export.ts is the other side): the OpenTelemetry
// SDK's batch processor and OTLP/HTTP exporter turn spans into the export request's JSON and post it, about 20 µs of
// CPU and some garbage a span, which on the thread that answers HTTP the next request would wait behind. Plain
// JavaScript so that it runs the same under Node, tsx, vitest and Bun.
//
// Messages in: { spans: SpanRecord[] } (tracing-export.ts), or { flush: id }; out: { outcome: 'ok' | 'dropped',
// count } after each batch the exporter tried, and { flushed: id }.
import { parentPort, workerData } from 'node:worker_threads';
import { SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { lowerThisThread } from './thread-priority.mjs';

// Spans are never waited on: the lowest priority, so exporting runs on a core no request needs.
lowerThisThread(19);

const SUCCESS = 0; // ExportResultCode.SUCCESS of @opentelemetry/core

const exporter = new OTLPTraceExporter({
  ...(workerData.url ? { url: workerData.url } : {}),
  ...(workerData.headers ? { headers: workerData.headers } : {}),
});
/** The exporter, with each batch's outcome told to the other side, which counts it on /metrics. */
const counted = {
  export(spans, done) {
    exporter.export(spans, (result) => {
      unreported -= spans.length;
      parentPort.postMessage({ outcome: result.code === SUCCESS ? 'ok' : 'dropped', count: spans.length });
      done(result);
    });
  },
  shutdown: () => exporter.shutdown(),
  forceFlush: () => exporter.forceFlush(),
};
// The SDK's processor drops what does not fit its queue without a word. Spans not yet reported by the exporter are
// counted here instead, and one that would not fit is counted as dropped before the processor sees it, so every span
// is counted once.
const maxQueueSize = Number(process.env.OTEL_BSP_MAX_QUEUE_SIZE) || 2048;
let unreported = 0;
const processor = new BatchSpanProcessor(counted, { maxQueueSize });
/** Queues a span for export, or counts it as dropped when the queue is full. */
function queue(span) {
  if (unreported >= maxQueueSize) return parentPort.postMessage({ outcome: 'dropped', count: 1 });
  unreported++;
  processor.onEnd(span);
}
const resource = resourceFromAttributes({ 'service.name': workerData.serviceName });

/** Milliseconds since the epoch, fractional, as OpenTelemetry's [seconds, nanoseconds]. */
const hrTime = (ms) => {
  const whole = Math.floor(ms / 1000);
  return [whole, Math.min(999_999_999, Math.round((ms - whole * 1000) * 1e6))];
};

const NONE = Object.freeze([]);
const contextOf = (traceId, spanId) => ({ traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: false });

/**
 * A recorded span as the SDK's ReadableSpan, which its processor and exporter take. A class of one shape: built as an
 * object literal with spread parts, a span took 3 µs here, twenty times this.
 */
class ExportedSpan {
  constructor(r) {
    this.name = r.name;
    this.kind = SpanKind.INTERNAL;
    this.context = contextOf(r.traceId, r.spanId);
    this.parentSpanContext = r.parentSpanId ? contextOf(r.traceId, r.parentSpanId) : undefined;
    this.startTime = hrTime(r.start);
    this.endTime = hrTime(r.end);
    this.duration = hrTime(r.end - r.start);
    this.status = { code: r.error ? SpanStatusCode.ERROR : SpanStatusCode.UNSET };
    this.attributes = r.attributes;
    this.links = NONE;
    // as the SDK's recordException writes it
    this.events = r.error ? [exceptionEvent(r.error, this.endTime)] : NONE;
    this.ended = true;
    this.resource = resource;
    this.instrumentationScope = { name: r.scope };
    this.droppedAttributesCount = 0;
    this.droppedEventsCount = 0;
    this.droppedLinksCount = 0;
  }
  spanContext() {
    return this.context;
  }
}

function exceptionEvent(error, time) {
  const attributes = { 'exception.type': error.type };
  if (error.message) attributes['exception.message'] = error.message;
  if (error.stack) attributes['exception.stacktrace'] = error.stack;
  return { name: 'exception', time, attributes };
}

parentPort.on('message', async (msg) => {
  if (msg.spans) for (const r of msg.spans) queue(new ExportedSpan(r));
  if (msg.flush !== undefined) {
    await processor.forceFlush().catch(() => {}); // a batch refused is counted as dropped by the exporter's callback
    parentPort.postMessage({ flushed: msg.flush });
  }
});
