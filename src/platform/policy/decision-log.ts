import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Logger } from '../log.ts';
import type { PolicyMetrics } from './metrics.ts';
import { currentRequestId } from '../request-scope.ts';
import type { PolicyDecision } from './types.ts';

// Every decision as OPA's decision-log event (plugins/logs EventV1), so any collector built for OPA reads them:
// written to the service's JSON log, and with a collector URL also POSTed in batches as a gzip'd JSON array
// (Content-Encoding: gzip), as OPA's decision-log plugin uploads to `<service>/logs`. The request id travels the
// way OPA carries request headers, in request_context.http.headers. Recording never waits for the network: events
// wait in a bounded buffer, and when the collector is down the oldest batch stays and new events beyond the bound
// are dropped and counted.

export type DecisionEvent = {
  labels: Record<string, string>;
  decision_id: string;
  path: string;
  input: unknown;
  result: PolicyDecision;
  bundles?: Record<string, { revision: string }>;
  timestamp: string;
  erased?: string[];
  request_context?: { http: { headers: Record<string, string[]> } };
};

export type Decided = { path: string; input: object; result: PolicyDecision; revision: string | undefined };

export interface DecisionLog {
  record(decided: Decided): void;
  /** Sends what is buffered (best effort), then stops the timer. */
  close(): Promise<void>;
}

export type DecisionLogOptions = {
  logger?: Logger | undefined;
  /** The collector's endpoint, e.g. http://collector:8080/logs. */
  url?: string | undefined;
  metrics: PolicyMetrics;
  labels?: Record<string, string>;
  bufferSize?: number;
  batchSize?: number;
  flushMs?: number;
  timeoutMs?: number;
  fetch?: typeof fetch;
};

export const BUNDLE_NAME = 'svc';

/** Fields that must never reach a log: a token or credential anywhere in the input is erased, and listed. */
const SECRET = /token|authorization|password|secret|cookie/i;

export function createDecisionLog(opts: DecisionLogOptions): DecisionLog {
  const labels = { id: randomUUID(), ...opts.labels };
  const bufferSize = opts.bufferSize ?? 10_000;
  const batchSize = opts.batchSize ?? 500;
  const flushMs = opts.flushMs ?? 5_000;
  const doFetch = opts.fetch ?? fetch;
  const buffer: DecisionEvent[] = [];
  let uploading: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const schedule = () => {
    if (!opts.url || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, flushMs);
    timer.unref();
  };

  async function flush(): Promise<void> {
    if (uploading || buffer.length === 0 || !opts.url) return;
    const batch = buffer.slice(0, batchSize);
    uploading = (async () => {
      try {
        const body = await promisify(gzip)(JSON.stringify(batch));
        const res = await doFetch(opts.url!, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
          body,
          signal: AbortSignal.timeout(opts.timeoutMs ?? 5_000),
        });
        await res.body?.cancel();
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        buffer.splice(0, batch.length);
        opts.metrics.decisionLogsSent.inc(batch.length);
      } catch (err) {
        opts.metrics.decisionLogUploadFailures.inc();
        opts.logger?.warn(
          { err: String(err), url: opts.url, buffered: buffer.length },
          'decision-log upload failed; the events stay buffered',
        );
      } finally {
        uploading = undefined;
      }
    })();
    await uploading;
    if (buffer.length >= batchSize) void flush();
    else if (buffer.length > 0) schedule();
  }

  return {
    record(decided) {
      const event = decisionEvent(decided, labels);
      opts.logger?.info({ event: 'policy_decision', decision_log: event }, 'Decision Log');
      if (!opts.url) return;
      if (buffer.length >= bufferSize) {
        opts.metrics.decisionLogsDropped.inc();
        return;
      }
      buffer.push(event);
      if (buffer.length >= batchSize) void flush();
      else schedule();
    },
    async close() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await uploading;
      await flush();
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

export function decisionEvent(decided: Decided, labels: Record<string, string>): DecisionEvent {
  const erased: string[] = [];
  const input = withoutSecrets(decided.input, '/input', erased);
  const requestId = currentRequestId();
  return {
    labels,
    decision_id: randomUUID(),
    path: decided.path,
    input,
    result: decided.result,
    ...(decided.revision ? { bundles: { [BUNDLE_NAME]: { revision: decided.revision } } } : {}),
    timestamp: new Date().toISOString(),
    ...(erased.length > 0 ? { erased } : {}),
    ...(requestId ? { request_context: { http: { headers: { 'X-Request-Id': [requestId] } } } } : {}),
  };
}

/** A copy of the value without any field whose name says it holds a secret; the JSON pointers erased are collected. */
function withoutSecrets(value: unknown, at: string, erased: string[]): unknown {
  if (Array.isArray(value)) return value.map((v, i) => withoutSecrets(v, `${at}/${i}`, erased));
  if (typeof value !== 'object' || value === null) return value;
  // entries, not assignments: a field named __proto__ (JSON.parse keeps it as a field) stays a field
  const kept: [string, unknown][] = [];
  for (const [k, v] of Object.entries(value)) {
    if (SECRET.test(k)) erased.push(`${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    else kept.push([k, withoutSecrets(v, `${at}/${k}`, erased)]);
  }
  return Object.fromEntries(kept);
}
