import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.ts';
import { type ScriptedGateway, startScriptedGateway } from '../support/scripted-gateway.ts';
import { startSvc, type SvcProcess } from '../support/svc-process.ts';

// The platform traces itself (SVC_TRACE_EXPERIMENT): `svc dev` exports explore's and retrieval's spans over OTLP to
// its own tracker, each request one trace filed under its caller, the model call a CHAT_MODEL span with its tokens.
// What redaction masks for the caller never reaches the trace, and only the caller and administrators read it.
const SERVICES = ['RETRIEVAL', 'EXPLORE', 'TRACKER', 'DASHBOARDS_RUNTIME'] as const;
const ana = { 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst' };
const uma = { 'X-User-Id': 'uma', 'X-User-Role': 'svc-user' };
const ada = { 'X-User-Id': 'ada', 'X-User-Role': 'svc-admin' };
const CONTACTS_SQL = 'SELECT c.c_name AS who, c.c_phone AS phone, c.c_acctbal FROM tpch.tiny.customer c ORDER BY c.c_custkey LIMIT 3';

type Span = { name: string; span_id: string; parent_span_id?: string; attributes: { key: string; value: unknown }[] };
/** A span attribute's value as the trace's JSON carries it. */
const attribute = (s: Span | undefined, key: string) => JSON.stringify(s?.attributes.find((a) => a.key === key)?.value ?? null);
type Trace = { trace: { trace_info: { trace_id: string; client_request_id?: string; trace_metadata: Record<string, string> } } };

describe('the platform traces itself into its tracker', () => {
  let gw: ScriptedGateway;
  let svc: SvcProcess;
  let dataDir: string;
  const ports: Record<string, number> = {};
  const url = (service: (typeof SERVICES)[number], path: string) => `http://127.0.0.1:${ports[service]}${path}`;
  const post = (service: (typeof SERVICES)[number], path: string, who: Record<string, string>, body: unknown) =>
    fetch(url(service, path), { method: 'POST', headers: { ...who, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const tracker = (path: string, who: Record<string, string>, init: RequestInit = {}) =>
    fetch(url('TRACKER', path), { ...init, headers: { ...who, 'Content-Type': 'application/json' } });

  /** The trace of the request with this id, once its spans have arrived (the exporter sends in batches). */
  async function traceOf(requestId: string, names: string[]): Promise<{ text: string; trace: Trace; spans: Span[] }> {
    let last = '';
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const search = await tracker('/api/3.0/mlflow/traces/search', ada, {
        method: 'POST',
        body: JSON.stringify({
          locations: [{ type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: '0' } }],
          filter: `client_request_id = '${requestId}'`,
        }),
      });
      const found = ((await search.json()) as { traces?: { trace_id: string }[] }).traces ?? [];
      if (found.length === 1) {
        const res = await tracker(`/api/3.0/mlflow/traces/get?trace_id=${found[0]!.trace_id}`, ada);
        last = await res.text();
        const spans = (JSON.parse(last).trace.spans ?? []) as Span[];
        if (names.every((n) => spans.some((s) => s.name === n))) {
          const info = await tracker(`/api/3.0/mlflow/traces/${found[0]!.trace_id}`, ada);
          return { text: last, trace: (await info.json()) as Trace, spans };
        }
      }
      await new Promise((r) => setTimeout(r, 300));
    }
    throw new Error(`no whole trace for request ${requestId}: ${last}`);
  }

  beforeAll(async () => {
    gw = await startScriptedGateway({
      models: ['svc-chat'],
      chat: (body) =>
        JSON.stringify(body.messages).includes('SQL')
          ? `Listing contacts.\n\`\`\`sql\n${CONTACTS_SQL}\n\`\`\``
          : 'The bell rings at noon [1].',
    });
    dataDir = await mkdtemp(join(tmpdir(), 'svc-platform-traces-'));
    for (const name of SERVICES) ports[name] = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SVC_DATA_DIR: dataDir,
      SVC_LOG_LEVEL: 'warn',
      SVC_LLM_URL: gw.url,
      SVC_LLM_MODEL: 'svc-chat',
      SVC_CHAT_URL: gw.url,
      SVC_CHAT_MODEL: 'svc-chat',
      SVC_EMBED_URL: gw.url,
      SVC_TRACING_ENABLED: 'true',
      SVC_TRACE_EXPERIMENT: '0',
      SVC_OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${ports.TRACKER}`,
      // the SDK's own setting: send a batch 0.2 s after its first span, not 5 s
      OTEL_BSP_SCHEDULE_DELAY: '200',
    };
    for (const name of ['SVC_PG_HOST', 'PG_HOST']) delete env[name];
    for (const [name, port] of Object.entries(ports)) env[`SVC_${name}_PORT`] = String(port);
    svc = await startSvc(['dev'], env, { until: 'dashboards-runtime', timeoutMs: 120_000 });
    expect(svc.alive(), svc.output()).toBe(true);
  }, 180_000);

  afterAll(async () => {
    await svc?.stop();
    await gw?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("records a question to explore as one trace: the ten steps, the model call's tokens, and no masked value", async () => {
    const asked = await post('EXPLORE', '/query', ana, { question: 'customer contacts', force: true });
    expect(asked.status).toBe(200);
    const answer = (await asked.json()) as { masked_columns: string[] };
    expect(answer.masked_columns).toEqual(['who', 'phone']);
    const requestId = asked.headers.get('x-request-id')!;
    const steps = ['cache', 'catalog', 'policy', 'generate', 'validate', 'cost', 'execute', 'redact', 'publish', 'remember'];
    const { text, trace, spans } = await traceOf(requestId, ['explore.query', 'chat', ...steps.map((s) => `explore.${s}`)]);

    const info = trace.trace.trace_info;
    expect(info.client_request_id).toBe(requestId);
    expect(info.trace_metadata['mlflow.trace.user']).toBe('ana');
    expect(JSON.parse(info.trace_metadata['mlflow.trace.tokenUsage']!)).toEqual({ input_tokens: 1, output_tokens: 1, total_tokens: 2 });
    const root = spans.find((s) => s.name === 'explore.query')!;
    expect(root.parent_span_id ?? null).toBeNull();
    const chat = spans.find((s) => s.name === 'chat')!;
    expect(attribute(chat, 'mlflow.spanType')).toContain('CHAT_MODEL');
    expect(chat.parent_span_id).toBe(spans.find((s) => s.name === 'explore.generate')!.span_id);

    // the values an administrator sees unmasked appear nowhere in the analyst's trace
    const seen = await post('EXPLORE', '/query', ada, { sql: CONTACTS_SQL });
    const rows = ((await seen.json()) as { preview_rows: string[][] }).preview_rows;
    expect(rows).toHaveLength(3);
    for (const [who, phone] of rows) {
      expect(who).toMatch(/^Customer#/);
      expect(text).not.toContain(who);
      expect(text).not.toContain(phone);
    }
    // the first question also starts explore's sample engine: seconds on a busy machine
  }, 60_000);

  it('records an answer from retrieval with its retrieval, its embedding and its model call', async () => {
    expect((await post('RETRIEVAL', '/collections', ada, { slug: 'bells', name: 'Bells', allowed_roles: [] })).status).toBe(201);
    const form = new FormData();
    form.append('file', new Blob(['The bell in the tower rings at noon every day.\n']), 'bell.txt');
    const uploaded = await fetch(url('RETRIEVAL', '/collections/bells/documents'), { method: 'POST', headers: ada, body: form });
    expect(uploaded.status).toBe(201);
    const asked = await post('RETRIEVAL', '/collections/bells/answer', ana, { question: 'when does the bell ring?' });
    expect(asked.status).toBe(200);
    const requestId = asked.headers.get('x-request-id')!;
    const { trace, spans } = await traceOf(requestId, ['retrieval.answer', 'retrieval.rank', 'embeddings', 'retrieval.generate', 'chat']);
    expect(trace.trace.trace_info.trace_metadata['mlflow.trace.user']).toBe('ana');
    const span = (name: string) => spans.find((s) => s.name === name);
    expect(attribute(span('retrieval.rank'), 'mlflow.spanType')).toContain('RETRIEVER');
    expect(attribute(span('retrieval.rank'), 'mlflow.spanOutputs')).toContain('rings at noon');
    expect(attribute(span('embeddings'), 'mlflow.spanType')).toContain('EMBEDDING');
    expect(span('embeddings')!.parent_span_id).toBe(span('retrieval.rank')!.span_id);
    expect(attribute(span('chat'), 'mlflow.spanType')).toContain('CHAT_MODEL');
    expect(span('chat')!.parent_span_id).toBe(span('retrieval.generate')!.span_id);
  });

  it("lets only the trace's user and administrators read it", async () => {
    const asked = await post('RETRIEVAL', '/collections/bells/query', ana, { question: 'bell' });
    expect(asked.status).toBe(200);
    const { trace } = await traceOf(asked.headers.get('x-request-id')!, ['retrieval.query', 'retrieval.rank']);
    const id = trace.trace.trace_info.trace_id;

    expect((await tracker(`/api/3.0/mlflow/traces/${id}`, ana)).status).toBe(200);
    expect((await tracker(`/api/3.0/mlflow/traces/get?trace_id=${id}`, ana)).status).toBe(200);
    for (const path of [
      `/api/3.0/mlflow/traces/${id}`,
      `/api/3.0/mlflow/traces/get?trace_id=${id}`,
      `/ajax-api/3.0/mlflow/get-trace-artifact?request_id=${id}`,
    ]) {
      const denied = await tracker(path, uma);
      expect(denied.status, path).toBe(403);
      expect(((await denied.json()) as { error_code: string; message: string }).message).toMatch(/another user's request/);
      expect((await tracker(path, {})).status, `${path} without identity`).toBe(403);
    }
    const tag = await tracker(`/api/3.0/mlflow/traces/${id}/tags`, uma, {
      method: 'PATCH',
      body: JSON.stringify({ key: 'k', value: 'v' }),
    });
    expect(tag.status).toBe(403);

    // a search lists another caller only their own traces, an administrator all of them
    const search = async (who: Record<string, string>) => {
      const res = await tracker('/api/3.0/mlflow/traces/search', who, {
        method: 'POST',
        body: JSON.stringify({ locations: [{ type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: '0' } }], max_results: 100 }),
      });
      expect(res.status).toBe(200);
      return (((await res.json()) as { traces?: { trace_id: string }[] }).traces ?? []).map((t) => t.trace_id);
    };
    expect(await search(uma)).toEqual([]);
    expect(await search(ana)).toContain(id);
    expect((await search(ada)).length).toBeGreaterThanOrEqual((await search(ana)).length);
    expect(
      (
        await tracker(
          '/api/3.0/mlflow/traces/search',
          {},
          {
            method: 'POST',
            body: JSON.stringify({ locations: [{ type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: '0' } }] }),
          },
        )
      ).status,
    ).toBe(403);
  });
});
