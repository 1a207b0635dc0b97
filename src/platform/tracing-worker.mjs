// The export of finished spans, in a worker thread of its own (tracing-export.ts is the other side): the OpenTelemetry
// SDK's batch processor and OTLP/HTTP exporter turn spans into the export request's JSON and post it, about 20 µs of
// CPU and some garbage a span, which on the thread that answers HTTP the next request would wait behind. Plain
// JavaScript so that it runs the same under Node, tsx, vitest and Bun.
//
// Messages in: a SpanBatch, { origin, spans } (tracing-export.ts: SPAN_FIELDS values a span, ids as numbers), or
// { flush: id }; out: { outcome: 'ok' | 'dropped', count } after each batch the exporter tried or the spans of a
// message that did not fit, and { flushed: id }.
import { getRandomValues } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { jsonText } from './json-text.mjs';
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
const resource = resourceFromAttributes({ 'service.name': workerData.serviceName });

/** Milliseconds since the epoch, fractional, as OpenTelemetry's [seconds, nanoseconds]. */
const hrTime = (ms) => {
  const whole = Math.floor(ms / 1000);
  return [whole, Math.min(999_999_999, Math.round((ms - whole * 1000) * 1e6))];
};

const NONE = Object.freeze([]);
const contextOf = (traceId, spanId) => ({ traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: false });

// Ids of the spans' numbers (tracing-export.ts counts spans in the process): a key random for each worker permutes
// a number to 64 bits (a Feistel network, one to one, so ids never repeat in a process and do not run in sequence),
// and a trace's id starts with 64 random bits of this worker, so that processes do not share ids.
const key = getRandomValues(new Uint32Array(10));
const DIGITS = [...'0123456789abcdef'].map((c) => c.charCodeAt(0));
/** Two 32-bit numbers as 16 hex digits, one flat string. */
function hex16(hi, lo) {
  const codes = new Array(16);
  for (let i = 0; i < 8; i++) {
    codes[i] = DIGITS[(hi >>> (28 - 4 * i)) & 15];
    codes[i + 8] = DIGITS[(lo >>> (28 - 4 * i)) & 15];
  }
  return String.fromCharCode.apply(null, codes);
}
function mix(x, k) {
  let y = Math.imul((x ^ k) >>> 0, 0x9e3779b1);
  y ^= y >>> 15;
  return Math.imul(y, 0x85ebca6b) ^ (y >>> 13);
}
/** `n` (below 2 ** 53) as 16 hex digits, one to one, under the four keys from `keys` on (spans' 0, traces' 4). */
function permuted(n, keys) {
  let hi = Math.floor(n / 0x1_0000_0000) >>> 0;
  let lo = n >>> 0;
  for (let round = 0; round < 4; round++) {
    const next = (hi ^ mix(lo, key[keys + round])) >>> 0;
    hi = lo;
    lo = next;
  }
  return hex16(hi, lo);
}
const ZERO = '0000000000000000';
/** Never all zeros, which OpenTelemetry reads as no id: the number 0, which is no span's, stands in for it. */
const spanIdOf = (n) => {
  const id = permuted(n, 0);
  return id === ZERO ? permuted(0, 0) : id;
};
const tracePrefix = hex16(key[8] | 0x8000_0000, key[9]);
// a batch holds a trace's spans one after another: its id, and that of the parent most spans share, made once
const last = { trace: -1, traceId: '', parent: -1, parentId: '' };
function traceIdOf(n) {
  if (last.trace !== n) [last.trace, last.traceId] = [n, tracePrefix + permuted(n, 4)];
  return last.traceId;
}
function parentIdOf(n) {
  if (last.parent !== n) [last.parent, last.parentId] = [n, spanIdOf(n)];
  return last.parentId;
}

/**
 * A recorded span as the SDK's ReadableSpan, which its processor and exporter take. A class of one shape: built as an
 * object literal with spread parts, a span took 3 µs here, twenty times this. `s` holds a batch's spans, this one's
 * values from `at` on (SPAN_FIELDS of tracing-export.ts: name, scope, trace, span, parent, start, end, attributes,
 * error, attributes to write as JSON text); times are on a clock that starts at `origin`.
 */
class ExportedSpan {
  constructor(s, at, origin) {
    const traceId = traceIdOf(s[at + 2]);
    const parent = s[at + 4];
    const start = origin + s[at + 5];
    const end = origin + s[at + 6];
    const error = s[at + 8];
    this.name = s[at];
    this.kind = SpanKind.INTERNAL;
    this.context = contextOf(traceId, spanIdOf(s[at + 3]));
    this.parentSpanContext = parent ? contextOf(traceId, parentIdOf(parent)) : undefined;
    this.startTime = hrTime(start);
    this.endTime = hrTime(end);
    this.duration = hrTime(end - start);
    this.status = { code: error ? SpanStatusCode.ERROR : SpanStatusCode.UNSET };
    this.attributes = withJson(s[at + 7], s[at + 9]);
    this.links = NONE;
    // as the SDK's recordException writes it
    this.events = error ? [exceptionEvent(error, this.endTime)] : NONE;
    this.ended = true;
    this.resource = resource;
    this.instrumentationScope = { name: s[at + 1] };
    this.droppedAttributesCount = 0;
    this.droppedEventsCount = 0;
    this.droppedLinksCount = 0;
  }
  spanContext() {
    return this.context;
  }
}

/** The attributes, with those the request's thread left as values (MLflow's inputs, outputs) written as JSON text. */
function withJson(attributes, json) {
  if (json) for (const key of Object.keys(json)) attributes[key] = jsonText(json[key]);
  return attributes;
}

function exceptionEvent(error, time) {
  const attributes = { 'exception.type': error.type };
  if (error.message) attributes['exception.message'] = error.message;
  if (error.stack) attributes['exception.stacktrace'] = error.stack;
  return { name: 'exception', time, attributes };
}

const SPAN_FIELDS = 10; // tracing-export.ts
parentPort.on('message', async (msg) => {
  if (msg.spans) {
    // what does not fit the queue is counted as dropped, in one message for the batch
    let dropped = 0;
    for (let at = 0; at < msg.spans.length; at += SPAN_FIELDS) {
      if (unreported >= maxQueueSize) dropped++;
      else {
        unreported++;
        processor.onEnd(new ExportedSpan(msg.spans, at, msg.origin));
      }
    }
    if (dropped) parentPort.postMessage({ outcome: 'dropped', count: dropped });
  }
  if (msg.flush !== undefined) {
    await processor.forceFlush().catch(() => {}); // a batch refused is counted as dropped by the exporter's callback
    parentPort.postMessage({ flushed: msg.flush });
  }
});
