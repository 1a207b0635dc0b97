import { mkdtemp, rm } from 'node:fs/promises';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { createLogger } from '../../src/platform/log.ts';
import { createTrackerApp } from '../../src/tracker/app.ts';
import { loadTrackerConfig } from '../../src/tracker/config.ts';
import type { TrackerDeps } from '../../src/tracker/deps.ts';
import { openSchemaGate, upgradeTrackerSchema } from '../../src/tracker/schema-gate.ts';
import { trackerDeps } from '../../src/tracker/service.ts';

// The tracker app as a deployment builds it, in-process on an in-memory PGlite and a temporary artifact folder.
// Tests talk to it over HTTP with app.request(), as the MLflow client would.
export type TrackerHarness = Awaited<ReturnType<typeof trackerHarness>>;

export async function trackerHarness(
  opts: { db?: Database; migrate?: boolean; env?: Record<string, string>; deps?: Partial<TrackerDeps> } = {},
) {
  const db = opts.db ?? (await openPglite({}));
  if (opts.migrate !== false) await upgradeTrackerSchema(db);
  const dataDir = await mkdtemp(join(tmpdir(), 'tracker-test-'));
  const deps = {
    ...trackerDeps({
      config: loadTrackerConfig({ ...opts.env }),
      db,
      dataDir,
      logger: createLogger('tracker', 'silent'),
      schema: openSchemaGate(),
    }),
    ...opts.deps,
  };
  const app = createTrackerApp(deps);

  async function call(method: string, path: string, body?: unknown) {
    const url = path.startsWith('/') ? path : `/api/2.0/mlflow/${path}`;
    const res = await app.request(url, {
      method,
      ...(body === undefined
        ? {}
        : { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
    });
    const text = await res.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, body: json, text };
  }

  /** GET with a query string built like the MLflow client's (repeated keys for lists). */
  function get(path: string, query: Record<string, string | number | (string | number)[]> = {}) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) for (const item of Array.isArray(v) ? v : [v]) qs.append(k, String(item));
    const q = qs.toString();
    return call('GET', `${path}${q ? `?${q}` : ''}`);
  }
  const post = (path: string, body: unknown = {}) => call('POST', path, body);

  return {
    app,
    db,
    deps,
    call,
    get,
    post,
    async close() {
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A tracker REST call as a client makes it (JSON in, JSON out); anything but a 2xx throws with the answer. */
export async function trackerCall(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  api = 'api/2.0/mlflow',
): Promise<Record<string, any>> {
  const res = await fetch(`${base}/${api}/${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

/** Spans posted to the tracker's OTLP endpoint as an SDK exports them (JSON), into `experimentId`; anything but a 2xx throws. */
export async function exportSpans(base: string, experimentId: string, spans: ReadableSpan[]): Promise<void> {
  const res = await fetch(`${base}/v1/traces`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'x-mlflow-experiment-id': experimentId },
    body: JsonTraceSerializer.serializeRequest(spans) as BodyInit,
  });
  if (!res.ok) throw new Error(`OTLP export: ${res.status} ${await res.text()}`);
}
