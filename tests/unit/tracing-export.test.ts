import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.ts';
import { startSvc, type SvcProcess } from '../support/svc-process.ts';

// SVC_TRACING_ENABLED=true: `svc serve explore` exports its pipeline spans over OTLP/HTTP (JSON) to
// SVC_OTEL_EXPORTER_OTLP_ENDPOINT, under the service's own name, and with SVC_TRACE_EXPERIMENT names the tracker
// experiment they belong to as MLflow's OTLP endpoint reads it. The receiver here records what arrives.
type Export = {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] };
    scopeSpans: { spans: { name: string }[] }[];
  }[];
};

/** `svc serve explore` on embedded defaults, exporting its spans for `experiment` to `endpoint`. */
const tracingEnv = (dataDir: string, experiment: string, endpoint: string): NodeJS.ProcessEnv => ({
  ...process.env,
  SVC_DATA_DIR: dataDir,
  SVC_PG_HOST: '',
  SVC_OPA_URL: '',
  SVC_LLM_URL: '',
  SVC_TRINO_URL: '',
  SVC_LOG_LEVEL: 'info',
  SVC_TRACING_ENABLED: 'true',
  SVC_TRACE_EXPERIMENT: experiment,
  SVC_OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
});

/** One question to explore, as an analyst. */
const askQuestion = (port: number) =>
  fetch(`http://127.0.0.1:${port}/query`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst' },
    body: JSON.stringify({ question: 'how many customers are there per nation' }),
  });

describe('trace export', () => {
  let receiver: Server;
  const exports: Export[] = [];
  const experiments = new Set<string | undefined>();
  let svc: SvcProcess;
  let dataDir: string;
  const port = 18695;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (req.url === '/v1/traces') {
          exports.push(JSON.parse(body) as Export);
          experiments.add(req.headers['x-mlflow-experiment-id'] as string | undefined);
        }
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    dataDir = await mkdtemp(join(tmpdir(), 'svc-tracing-'));
    const env = tracingEnv(dataDir, '42', `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`);
    svc = await startSvc(['serve', 'explore', '--port', String(port)], env, { until: 'explore listening', timeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await svc?.stop();
    receiver?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("sends the pipeline's spans under the service name", async () => {
    expect((await askQuestion(port)).status).toBe(200);
    const deadline = Date.now() + 20_000; // the batch processor sends every few seconds
    const names = () => exports.flatMap((e) => e.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((sp) => sp.name))));
    const steps = ['cache', 'catalog', 'policy', 'generate', 'validate', 'cost', 'execute', 'redact', 'publish', 'remember'];
    // the spans of one request can arrive in more than one batch
    const missing = () => steps.filter((step) => !names().some((n) => n.endsWith(step)));
    while (missing().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    const services = exports.flatMap((e) =>
      e.resourceSpans.map((r) => r.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue),
    );
    expect(new Set(services)).toEqual(new Set(['explore']));
    expect(experiments).toEqual(new Set(['42']));
    expect(missing(), 'steps without a span').toEqual([]);
    // the first question also starts the sample engine's worker (it starts with the first query): seconds on a busy machine
  }, 60_000);
});

describe('trace export to a tracker that hangs', () => {
  let svc: SvcProcess;
  let dataDir: string;
  let port: number;
  let hanging: Server;

  beforeAll(async () => {
    port = await freePort();
    dataDir = await mkdtemp(join(tmpdir(), 'svc-tracing-down-'));
    // it takes each export and never answers; the SDK's own settings make it send at once and give up after 2 s
    hanging = createServer(() => {});
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const env = {
      ...tracingEnv(dataDir, '0', `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`),
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
      // a queue of four while a batch of four hangs: the other spans do not fit, and are counted as dropped too
      OTEL_BSP_MAX_QUEUE_SIZE: '4',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4',
    };
    svc = await startSvc(['serve', 'explore', '--port', String(port)], env, { until: 'explore listening', timeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await svc?.stop();
    hanging?.closeAllConnections();
    hanging?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers as ever and counts the spans it could not send', async () => {
    expect((await askQuestion(port)).status).toBe(200);
    const dropped = async () => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      return Number(/^svc_trace_spans_exported_total\{outcome="dropped"[^}]*\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    // the root span and the ten steps, once the exporter has given up on them
    await expect.poll(dropped, { timeout: 100_000, interval: 500 }).toBeGreaterThanOrEqual(11);
    expect(await dropped()).toBe(11);
  }, 120_000);
});
