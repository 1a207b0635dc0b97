import { context, trace, type Attributes, type Span } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// Spans from OpenTelemetry instrumentations that follow OpenInference, the OpenTelemetry GenAI conventions or
// Traceloop read back as MLflow's own: span type, inputs, outputs, token usage, model and provider, and the trace's
// previews and token usage, as MLflow's server translates them on ingest (tests/tracing/test_otel_loading.py).
describe('tracker OTLP ingest of OpenTelemetry GenAI conventions', () => {
  let t: TrackerHarness;
  let exp: string;
  beforeAll(async () => {
    t = await trackerHarness();
    exp = (await t.post('experiments/create', { name: 'otel-conventions' })).body.experiment_id;
  });
  afterAll(async () => t?.close());

  /** One trace: a root span with these attributes, and children with theirs. */
  function record(root: Attributes, children: Attributes[] = []): ReadableSpan[] {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('conventions');
    const parent: Span = tracer.startSpan('root', { attributes: root });
    for (const [i, attributes] of children.entries()) {
      tracer.startSpan(`child-${i}`, { attributes }, trace.setSpan(context.active(), parent)).end();
    }
    parent.end();
    return exporter.getFinishedSpans();
  }

  /** Sends the spans and reads the trace back as the client does: info and spans, attributes decoded. */
  async function roundTrip(spans: ReadableSpan[]) {
    const sent = await t.app.request('/v1/traces', {
      method: 'POST',
      body: ProtobufTraceSerializer.serializeRequest(spans)! as BodyInit,
      headers: { 'Content-Type': 'application/x-protobuf', 'x-mlflow-experiment-id': exp },
    });
    expect(sent.status).toBe(200);
    const traceId = `tr-${spans[0]!.spanContext().traceId}`;
    const got = await t.get('/api/3.0/mlflow/traces/get', { trace_id: traceId });
    expect(got.status, got.text).toBe(200);
    const decode = (v: Record<string, any>): unknown =>
      'string_value' in v
        ? v.string_value
        : 'int_value' in v
          ? Number(v.int_value)
          : 'kvlist_value' in v
            ? Object.fromEntries(v.kvlist_value.values.map((kv: any) => [kv.key, decode(kv.value)]))
            : 'array_value' in v
              ? v.array_value.values.map(decode)
              : v;
    const spansByName = Object.fromEntries(
      got.body.trace.spans.map((s: any) => [s.name, Object.fromEntries(s.attributes.map((a: any) => [a.key, decode(a.value)]))]),
    );
    return { info: got.body.trace.trace_info, spans: spansByName as Record<string, Record<string, unknown>>, traceId };
  }

  const conventions = [
    {
      name: 'OpenInference',
      input: 'input.value',
      output: 'output.value',
      prompt: 'llm.token_count.prompt',
      completion: 'llm.token_count.completion',
    },
    {
      name: 'GenAI',
      input: 'gen_ai.input.messages',
      output: 'gen_ai.output.messages',
      prompt: 'gen_ai.usage.input_tokens',
      completion: 'gen_ai.usage.output_tokens',
    },
    {
      name: 'Traceloop',
      input: 'traceloop.entity.input',
      output: 'traceloop.entity.output',
      prompt: 'gen_ai.usage.prompt_tokens',
      completion: 'gen_ai.usage.completion_tokens',
    },
  ];

  for (const c of conventions) {
    it(`reads ${c.name} inputs, outputs and token counts as MLflow's, with the trace's previews and usage`, async () => {
      const { info, spans } = await roundTrip(
        record({ [c.input]: 'Hello, world!', [c.output]: 'Bye!', [c.prompt]: 100, [c.completion]: 50 }),
      );
      expect(spans.root!['mlflow.spanInputs']).toBe('Hello, world!');
      expect(spans.root!['mlflow.spanOutputs']).toBe('Bye!');
      expect(spans.root!['mlflow.chat.tokenUsage']).toEqual({ input_tokens: 100, output_tokens: 50, total_tokens: 150 });
      expect(info.request_preview).toBe('"Hello, world!"');
      expect(info.response_preview).toBe('"Bye!"');
      expect(JSON.parse(info.trace_metadata['mlflow.trace.tokenUsage'])).toEqual({
        input_tokens: 100,
        output_tokens: 50,
        total_tokens: 150,
      });
    });
  }

  it('types spans by their kind in each convention, and a span typed by the client keeps its type', async () => {
    const { spans, traceId } = await roundTrip(
      record({ 'openinference.span.kind': 'LLM' }, [
        { 'openinference.span.kind': 'RETRIEVER' },
        { 'traceloop.span.kind': 'tool' },
        { 'gen_ai.operation.name': 'chat' },
        { 'gen_ai.operation.name': 'embeddings', 'mlflow.spanType': 'UNKNOWN' },
        { 'openinference.span.kind': 'LLM', 'mlflow.spanType': 'AGENT' },
        { 'openinference.span.kind': 'SOMETHING_NEW' },
      ]),
    );
    expect(Object.fromEntries(Object.entries(spans).map(([name, a]) => [name, a['mlflow.spanType']]))).toEqual({
      root: 'LLM',
      'child-0': 'RETRIEVER',
      'child-1': 'TOOL',
      'child-2': 'CHAT_MODEL',
      'child-3': 'EMBEDDING',
      'child-4': 'AGENT',
      'child-5': undefined,
    });
    const search = await t.post('/api/3.0/mlflow/traces/search', {
      locations: [{ mlflow_experiment: { experiment_id: exp } }],
      filter: "span.type = 'CHAT_MODEL'",
    });
    expect(search.body.traces.map((x: { trace_id: string }) => x.trace_id)).toEqual([traceId]);
  });

  it('takes JSON messages as structure, numbered Traceloop prompts, counts sent as text, model and provider', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const { spans } = await roundTrip(
      record(
        {
          'gen_ai.input.messages': JSON.stringify(messages),
          'gen_ai.request.model': 'gpt-test',
          'gen_ai.provider.name': 'openai',
          'gen_ai.usage.input_tokens': '7',
          'gen_ai.usage.output_tokens': '3',
          'gen_ai.usage.cache_read.input_tokens': 2,
        },
        [{ 'gen_ai.prompt.0.content': 'first prompt', 'gen_ai.completion.0.content': 'first answer', 'gen_ai.system': 'anthropic' }],
      ),
    );
    expect(spans.root!['mlflow.spanInputs']).toEqual(messages);
    expect(spans.root!['mlflow.llm.model']).toBe('gpt-test');
    expect(spans.root!['mlflow.llm.provider']).toBe('openai');
    expect(spans.root!['mlflow.chat.tokenUsage']).toEqual({
      input_tokens: 7,
      output_tokens: 3,
      total_tokens: 10,
      cache_read_input_tokens: 2,
    });
    expect(spans['child-0']).toMatchObject({
      'mlflow.spanInputs': 'first prompt',
      'mlflow.spanOutputs': 'first answer',
      'mlflow.llm.provider': 'anthropic',
    });
  });

  it('never replaces what the client set, and passes over empty values', async () => {
    const { spans, info } = await roundTrip(
      record({
        'mlflow.spanInputs': JSON.stringify({ q: 'mine' }),
        'input.value': 'theirs',
        'output.value': '',
        'gen_ai.output.messages': '[]',
        'traceloop.entity.output': 'last resort',
        'mlflow.chat.tokenUsage': JSON.stringify({ input_tokens: 1, output_tokens: 1, total_tokens: 2 }),
        'llm.token_count.prompt': 100,
      }),
    );
    expect(spans.root!['mlflow.spanInputs']).toEqual({ q: 'mine' });
    expect(spans.root!['mlflow.spanOutputs']).toBe('last resort');
    expect(spans.root!['mlflow.chat.tokenUsage']).toEqual({ input_tokens: 1, output_tokens: 1, total_tokens: 2 });
    expect(info.request_preview).toBe('{"q": "mine"}');
  });
});
