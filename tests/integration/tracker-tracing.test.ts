import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { context, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedGateway } from '../support/scripted-gateway.ts';
import { describeFailures, mlflowPython, runSuite, startTracker, type RunningTracker } from '../tracker-client/server.ts';

// Tracing end to end on `svc serve tracker` (real Postgres and MinIO): Node's OpenTelemetry SDK exports nested spans
// with @opentelemetry/exporter-trace-otlp-proto and the official MLflow client reads them back with mlflow.get_trace;
// then the client's own @mlflow.trace spans and the Python OpenTelemetry exporter (tests/tracker-client/tracing.py),
// and mlflow.openai.autolog over the real openai SDK against the scripted gateway (tests/tracker-client/openai_autolog.py).
describe('tracker tracing with real SDKs', () => {
  let tracker: RunningTracker;
  beforeAll(async () => {
    tracker = await startTracker('tracker-tracing');
  }, 900_000);
  afterAll(async () => tracker?.stop());

  const nanos = (t: [number, number]) => String(BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]));

  it("Node's OTLP/protobuf exporter: every span, parent, attribute, event and time reads back through mlflow.get_trace", async () => {
    const created = await fetch(`${tracker.url}/api/2.0/mlflow/experiments/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'node-otlp' }),
    });
    const exp = ((await created.json()) as { experiment_id: string }).experiment_id;
    const exporter = new OTLPTraceExporter({ url: `${tracker.url}/v1/traces`, headers: { 'x-mlflow-experiment-id': exp } });
    const recorded = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), new SimpleSpanProcessor(recorded)] });
    const tracer = provider.getTracer('svc-integration');
    const under = (parent: Span) => trace.setSpan(context.active(), parent);
    const root = tracer.startSpan('question', { attributes: { 'mlflow.spanType': 'CHAIN', user: 'ada', n: 2 } });
    const plan = tracer.startSpan('plan', { attributes: { 'mlflow.spanType': 'LLM', temperature: 0.25 } }, under(root));
    plan.addEvent('tokens', { prompt: 12, completion: 30 });
    const sql = tracer.startSpan('run-sql', { attributes: { statement: 'select 1' } }, under(plan));
    sql.setStatus({ code: SpanStatusCode.ERROR, message: 'timeout' });
    sql.end();
    plan.end();
    root.end();
    await provider.forceFlush();
    // read before shutdown, which empties the in-memory exporter
    const sent = new Map(recorded.getFinishedSpans().map((s: ReadableSpan) => [s.name, s]));
    await provider.shutdown();
    const traceId = `tr-${root.spanContext().traceId}`;

    const { stdout } = await promisify(execFile)(
      await mlflowPython(),
      [join(fileURLToPath(new URL('../tracker-client/', import.meta.url)), 'read_trace.py'), traceId],
      { env: { ...process.env, ...tracker.clientEnv }, timeout: 120_000 },
    );
    const got = JSON.parse(stdout);
    expect(got.experiment_id).toBe(exp);
    expect(got.state).toBe('OK');
    expect(got.tags['mlflow.trace.spansLocation']).toBe('TRACKING_STORE');
    // the root first, then by start time (spans started in the same instant in either order)
    expect(got.spans[0].name).toBe('question');
    expect(got.spans.map((s: any) => s.name).sort()).toEqual(['plan', 'question', 'run-sql']);
    for (const s of got.spans) {
      const want = sent.get(s.name)!;
      expect(s.span_id).toBe(want.spanContext().spanId);
      expect(s.parent_id ?? undefined).toBe(want.parentSpanContext?.spanId);
      expect(s.start_time_ns).toBe(nanos(want.startTime));
      expect(s.end_time_ns).toBe(nanos(want.endTime));
    }
    const byName = Object.fromEntries(got.spans.map((s: any) => [s.name, s]));
    const [q, p, r] = [byName.question, byName.plan, byName['run-sql']];
    expect(q.attributes).toEqual({ 'mlflow.spanType': 'CHAIN', user: 'ada', n: 2 });
    expect(p.attributes).toEqual({ 'mlflow.spanType': 'LLM', temperature: 0.25 });
    expect(p.events).toEqual([
      { name: 'tokens', timestamp: nanos(sent.get('plan')!.events[0]!.time), attributes: { prompt: 12, completion: 30 } },
    ]);
    expect(r.status).toEqual({ code: 'ERROR', description: 'timeout' });
    // the root never set a status: UNSET as recorded (the trace's state is OK, as MLflow maps it)
    expect(q.status.code).toBe('UNSET');
  }, 300_000);

  it('the MLflow client (@mlflow.trace, assessments, trace-run links) and the Python OpenTelemetry exporter pass the tracing checks', async () => {
    const result = await runSuite('tracing', tracker.clientEnv);
    expect(result.summary, describeFailures(result)).toBeDefined();
    expect(result.summary!.failures, describeFailures(result)).toEqual([]);
    expect(result.summary!.passed).toBe(4);
    expect(result.exitCode, describeFailures(result)).toBe(0);
  }, 600_000);

  it("mlflow.openai.autolog: the real openai SDK's chat and embedding calls to the scripted gateway become traces", async () => {
    const gw = await startScriptedGateway({ chat: () => 'There are 1500000 orders.' });
    try {
      const result = await runSuite('openai_autolog', { ...tracker.clientEnv, SVC_TEST_OPENAI_URL: gw.url });
      expect(result.summary!.failures, describeFailures(result)).toEqual([]);
      expect(result.summary!.passed).toBe(1);
      // the SDK's calls reached the gateway: the traces are of real calls
      expect(gw.requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/embeddings']);
    } finally {
      await gw.close();
    }
  }, 600_000);
});
