import { context, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// OTLP/HTTP span export at /v1/traces as OpenTelemetry's own serializers encode it (protobuf and JSON), read back
// through MLflow 3's traces/get and the trace data artifact: every span with its parent, attributes, events, status
// and nanosecond times, and the trace info MLflow's store derives from the spans.
describe('tracker OTLP spans', () => {
  let t: TrackerHarness;
  let exp: string;
  beforeAll(async () => {
    t = await trackerHarness();
    exp = (await t.post('experiments/create', { name: 'otlp-spans' })).body.experiment_id;
  });
  afterAll(async () => t?.close());

  /** Three nested spans made by the SDK: agent > llm (event, error) > tool. */
  function recordTrace(rootName = 'agent', question = 'how many?'): ReadableSpan[] {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('svc-test');
    const under = (parent: Span) => trace.setSpan(context.active(), parent);
    const root = tracer.startSpan(rootName, {
      attributes: {
        'mlflow.spanType': 'AGENT',
        'mlflow.spanInputs': JSON.stringify({ q: question }),
        question,
        n: 3,
        ratio: 0.5,
        ok: true,
      },
    });
    const llm = tracer.startSpan('llm', { attributes: { 'mlflow.spanType': 'LLM', tags: ['a', 'b'] } }, under(root));
    llm.addEvent('token', { index: 1, text: 'hi' });
    const tool = tracer.startSpan('tool', {}, under(llm));
    tool.end();
    llm.setStatus({ code: SpanStatusCode.ERROR, message: 'rate limited' });
    llm.end();
    root.setStatus({ code: SpanStatusCode.OK });
    root.end();
    return exporter.getFinishedSpans();
  }

  const nanos = (s: ReadableSpan, which: 'startTime' | 'endTime') => String(BigInt(s[which][0]) * 1_000_000_000n + BigInt(s[which][1]));
  const hexOf = (b64: string) => Buffer.from(b64, 'base64').toString('hex');
  const attrs = (list: { key: string; value: Record<string, unknown> }[]) => Object.fromEntries(list.map((a) => [a.key, a.value]));

  async function send(body: Uint8Array | string, contentType: string, headers: Record<string, string> = { 'x-mlflow-experiment-id': exp }) {
    const res = await t.app.request('/v1/traces', {
      method: 'POST',
      body: body as BodyInit,
      headers: { 'Content-Type': contentType, ...headers },
    });
    return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
  }

  async function expectStored(spans: ReadableSpan[]) {
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
    const traceId = `tr-${byName.agent!.spanContext().traceId}`;
    const got = await t.get('/api/3.0/mlflow/traces/get', { trace_id: traceId });
    expect(got.status, got.text).toBe(200);
    const { trace_info: info, spans: stored } = got.body.trace;
    // MLflow's order: the root, then by start time (two spans may start in the same nanosecond)
    expect(stored[0].name).toBe('agent');
    expect(stored.map((s: any) => s.name).sort()).toEqual(['agent', 'llm', 'tool']);
    const starts = stored.slice(1).map((s: any) => BigInt(s.start_time_unix_nano));
    expect(starts.every((n: bigint, i: number) => i === 0 || starts[i - 1]! <= n)).toBe(true);
    for (const s of stored) {
      const sent = byName[s.name]!;
      expect(hexOf(s.trace_id)).toBe(sent.spanContext().traceId);
      expect(hexOf(s.span_id)).toBe(sent.spanContext().spanId);
      expect(s.parent_span_id ? hexOf(s.parent_span_id) : undefined).toBe(sent.parentSpanContext?.spanId);
      expect(String(s.start_time_unix_nano)).toBe(nanos(sent, 'startTime'));
      expect(String(s.end_time_unix_nano)).toBe(nanos(sent, 'endTime'));
      expect(attrs(s.attributes)['mlflow.traceRequestId']).toEqual({ string_value: traceId });
    }
    const agent = stored.find((s: any) => s.name === 'agent');
    const llm = stored.find((s: any) => s.name === 'llm');
    expect(attrs(agent.attributes)).toMatchObject({
      'mlflow.spanType': { string_value: 'AGENT' },
      question: { string_value: 'how many?' },
      n: { int_value: 3 },
      ratio: { double_value: 0.5 },
      ok: { bool_value: true },
    });
    expect(agent.status).toEqual({ code: 'STATUS_CODE_OK' });
    // JSON text in a string attribute reads back as the structure, as MLflow's store keeps it
    expect(attrs(agent.attributes)['mlflow.spanInputs']).toEqual({
      kvlist_value: { values: [{ key: 'q', value: { string_value: 'how many?' } }] },
    });
    expect(attrs(llm.attributes).tags).toEqual({ array_value: { values: [{ string_value: 'a' }, { string_value: 'b' }] } });
    expect(llm.status).toEqual({ code: 'STATUS_CODE_ERROR', message: 'rate limited' });
    expect(llm.events).toHaveLength(1);
    expect(llm.events[0]).toMatchObject({
      name: 'token',
      time_unix_nano: String(BigInt(byName.llm!.events[0]!.time[0]) * 1_000_000_000n + BigInt(byName.llm!.events[0]!.time[1])),
    });
    expect(attrs(llm.events[0].attributes)).toEqual({ index: { int_value: 1 }, text: { string_value: 'hi' } });

    // the trace info MLflow's store makes from spans it had not seen started
    expect(info.trace_id).toBe(traceId);
    expect(info.trace_location.mlflow_experiment.experiment_id).toBe(exp);
    expect(info.state).toBe('OK');
    expect(info.request_preview).toBe('{"q": "how many?"}');
    expect(Date.parse(info.request_time)).toBe(Number(BigInt(nanos(byName.agent!, 'startTime')) / 1_000_000n));
    expect(info.tags['mlflow.trace.spansLocation']).toBe('TRACKING_STORE');
    expect(info.tags['mlflow.artifactLocation']).toBe(`mlflow-artifacts:/${exp}/traces/${traceId}/artifacts`);
    return traceId;
  }

  it('keeps spans exported in protobuf and answers them through traces/get', async () => {
    const spans = recordTrace();
    const res = await send(ProtobufTraceSerializer.serializeRequest(spans)!, 'application/x-protobuf');
    expect(res.status, res.text).toBe(200);
    expect(res.type).toBe('application/x-protobuf');
    expect(res.text).toBe('');
    await expectStored(spans);
  });

  it('keeps spans exported in OTLP JSON (hex ids) the same way, and a resent batch is not doubled', async () => {
    const spans = recordTrace();
    const body = JsonTraceSerializer.serializeRequest(spans)!;
    expect((await send(body, 'application/json')).status).toBe(200);
    const again = await send(body, 'application/json; charset=utf-8');
    expect(again.status).toBe(200);
    expect(JSON.parse(again.text)).toEqual({});
    const traceId = await expectStored(spans);
    const search = await t.post('/api/3.0/mlflow/traces/search', {
      locations: [{ type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: exp } }],
    });
    expect(search.body.traces.map((x: any) => x.trace_id)).toContain(traceId);
  });

  it('serves the trace data artifact as MLflow writes traces.json: base64 ids, attributes as JSON text', async () => {
    const spans = recordTrace();
    await send(ProtobufTraceSerializer.serializeRequest(spans)!, 'application/x-protobuf');
    const traceId = `tr-${spans[0]!.spanContext().traceId}`;
    const res = await t.get('/ajax-api/2.0/mlflow/get-trace-artifact', { request_id: traceId });
    expect(res.status, res.text).toBe(200);
    const agent = res.body.spans[0];
    expect(agent.name).toBe('agent');
    expect(agent.parent_span_id).toBeNull();
    expect(agent.attributes['mlflow.spanInputs']).toBe('{"q": "how many?"}');
    expect(agent.attributes).toMatchObject({
      'mlflow.spanType': '"AGENT"',
      n: '3',
      ratio: '0.5',
      ok: 'true',
      'mlflow.traceRequestId': `"${traceId}"`,
    });
    // nanoseconds as JSON integers, exact beyond 2^53
    expect(res.text).toContain(`"start_time_unix_nano":${nanos(spans.find((s) => s.name === 'agent')!, 'startTime')}`);
    const llm = res.body.spans.find((s: any) => s.name === 'llm');
    expect(llm.status).toEqual({ code: 'STATUS_CODE_ERROR', message: 'rate limited' });
    expect(llm.events[0]).toMatchObject({ name: 'token', attributes: { index: 1, text: 'hi' } });
  });

  it("keeps the client's own trace info once it starts the trace, and the spans stay readable", async () => {
    const spans = recordTrace();
    const traceId = `tr-${spans[0]!.spanContext().traceId}`;
    await send(ProtobufTraceSerializer.serializeRequest(spans)!, 'application/x-protobuf');
    const trace_info = {
      trace_id: traceId,
      trace_location: { type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: exp } },
      request_time: '2001-01-01T00:00:00Z',
      execution_duration: '5s',
      state: 'OK',
      trace_metadata: { 'mlflow.trace.sizeStats': '{"num_spans": 3}' },
      tags: { team: 'blue' },
    };
    const started = await t.post('/api/3.0/mlflow/traces', { trace: { trace_info } });
    expect(started.status, started.text).toBe(200);
    expect(started.body.trace.trace_info.tags['mlflow.trace.spansLocation']).toBe('TRACKING_STORE');
    const got = await t.get('/api/3.0/mlflow/traces/get', { trace_id: traceId });
    expect(got.status, got.text).toBe(200);
    expect(got.body.trace.trace_info).toMatchObject({ request_time: '2001-01-01T00:00:00.000Z', execution_duration: '5s' });
    expect(got.body.trace.spans).toHaveLength(3);
    const batch = await t.get('/api/3.0/mlflow/traces/batchGet', { trace_ids: [traceId, 'tr-none'] });
    expect(batch.body.traces.map((x: any) => x.trace_info.trace_id)).toEqual([traceId]);
  });

  it.each([
    ['no experiment header', 'application/x-protobuf', {}, 422],
    ['an unknown media type', 'text/plain', undefined, 400],
    ['a body that is not protobuf', 'application/x-protobuf', undefined, 400],
  ] as const)('refuses %s as MLflow does', async (_case, type, headers, status) => {
    const res = await send(new Uint8Array([0xff, 0xff, 0xff]), type, headers);
    expect(res.status, res.text).toBe(status);
    expect(JSON.parse(res.text).detail).toBeDefined();
  });

  it('refuses spans for an experiment that does not exist, in MLflow words, and keeps nothing', async () => {
    const spans = recordTrace();
    const res = await send(ProtobufTraceSerializer.serializeRequest(spans)!, 'application/x-protobuf', {
      'x-mlflow-experiment-id': '987654',
    });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text).error_code).toBe('RESOURCE_DOES_NOT_EXIST');
    const got = await t.get('/api/3.0/mlflow/traces/get', { trace_id: `tr-${spans[0]!.spanContext().traceId}` });
    expect(got.status).toBe(404);
  });

  it('an empty export is refused, and a trace without stored spans answers traces/get with 404', async () => {
    expect((await send(JSON.stringify({ resourceSpans: [] }), 'application/json')).status).toBe(400);
    await t.post('/api/3.0/mlflow/traces', {
      trace: {
        trace_info: {
          trace_id: 'tr-nospans',
          trace_location: { mlflow_experiment: { experiment_id: exp } },
          request_time: '2001-01-01T00:00:00Z',
        },
      },
    });
    const got = await t.get('/api/3.0/mlflow/traces/get', { trace_id: 'tr-nospans' });
    expect(got.status).toBe(404);
    expect(got.body.error_code).toBe('RESOURCE_DOES_NOT_EXIST');
  });

  it('filters search_traces by span name, type, status and attribute, as MLflow has them', async () => {
    const exp2 = (await t.post('experiments/create', { name: 'span-filters' })).body.experiment_id;
    const a = recordTrace('agent', 'how many?');
    const b = recordTrace('planner', 'which one?');
    for (const spans of [a, b]) {
      await send(ProtobufTraceSerializer.serializeRequest(spans)!, 'application/x-protobuf', { 'x-mlflow-experiment-id': exp2 });
    }
    const [idA, idB] = [a, b].map((spans) => `tr-${spans[0]!.spanContext().traceId}`);
    const search = async (filter: string) => {
      const res = await t.post('/api/3.0/mlflow/traces/search', { locations: [{ mlflow_experiment: { experiment_id: exp2 } }], filter });
      expect(res.status, res.text).toBe(200);
      return (res.body.traces ?? []).map((x: any) => x.trace_id).sort();
    };
    expect(await search("span.name = 'planner'")).toEqual([idB]);
    expect(await search("span.name IN ('agent', 'nothing')")).toEqual([idA]);
    expect(await search("span.type = 'LLM'")).toEqual([idA, idB].sort());
    expect(await search("span.status = 'ERROR' AND span.name LIKE 'pl%'")).toEqual([idB]);
    expect(await search("span.attributes.question = 'how many?'")).toEqual([idA]);
    expect(await search("span.attributes.n = '3'")).toEqual([idA, idB].sort());
    expect(await search("span.attributes.question LIKE 'which%'")).toEqual([idB]);
    expect(await search("span.attributes.question = 'nobody asked'")).toEqual([]);
    const bad = await t.post('/api/3.0/mlflow/traces/search', {
      locations: [{ mlflow_experiment: { experiment_id: exp2 } }],
      filter: "span.colour = 'red'",
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error_code).toBe('INVALID_PARAMETER_VALUE');
  });
});
