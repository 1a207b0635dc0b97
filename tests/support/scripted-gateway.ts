/**
 * A real OpenAI-compatible HTTP server for tests, on 127.0.0.1 with a free port. Point the real `openai` SDK (or
 * createOpenAiEmbedder / createOpenAiChat) at `gw.url`, which ends in `/v1`.
 *
 *   const gw = await startScriptedGateway({ chat: () => 'SELECT 1', models: ['svc-llm'] });
 *   gw.script.chat = (body) => (body.model === 'bad' ? { status: 400, body: { error: { message: 'no' } } } : 'hi');
 *   gw.failNext('/v1/embeddings', 503, 2);   // the next two embedding calls answer 503 (status 0 drops the socket)
 *   gw.requests                              // every request received: { method, path, body }
 *   await gw.close();
 *
 * Endpoints:
 *   POST /v1/chat/completions  content from script.chat(body): a string, or { status, body } to answer raw. With
 *                              `"stream": true` the string goes out as Server-Sent Events, a word a chunk,
 *                              `script.streamDelayMs` apart (usage last when `stream_options.include_usage`);
 *                              `script.breakStreamAfter` drops the socket after that many chunks. A stream the
 *                              client abandons before its end is listed in `gw.abandoned`.
 *   POST /v1/embeddings        vectors from script.embed(body) if set, else the offline embedder's (dimension
 *                              `dim`, default 768, or the request's `dimensions`); base64 when asked, as OpenAI does.
 *   GET  /v1/models            script.models in OpenAI's list shape.
 * Anything else answers 404 in OpenAI's error shape.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOfflineEmbedder } from '../../src/platform/gateway/index.ts';

export type RawAnswer = { status: number; body: unknown };
export type GatewayRequest = { method: string; path: string; body: any };
export type Script = {
  chat: (body: any) => string | RawAnswer;
  embed?: (body: any) => number[][] | RawAnswer;
  models: string[];
  streamDelayMs?: number;
  breakStreamAfter?: number;
};
export type ScriptedGatewayOptions = Partial<Script> & {
  dim?: number;
  /** Each embedding request answers this many milliseconds late (a real gateway's round trip, for benchmarks). */
  embedDelayMs?: number;
  /** Keep every request in `requests` (default); a benchmark of millions of rows turns it off. */
  record?: boolean;
};
export type ScriptedGateway = {
  url: string;
  requests: GatewayRequest[];
  /** Streamed chat requests whose client went away before the stream's end. */
  abandoned: GatewayRequest[];
  script: Script;
  /** The next `times` requests to `path` ('/v1/embeddings' or 'embeddings') answer `status`; 0 drops the socket. */
  failNext(path: string, status: number, times?: number): void;
  close(): Promise<void>;
};

const isRaw = (x: unknown): x is RawAnswer => typeof x === 'object' && x !== null && !Array.isArray(x) && 'status' in x;
const normalise = (p: string) => '/v1/' + p.replace(/^\/?(v1\/)?/, '');

export async function startScriptedGateway(opts: ScriptedGatewayOptions = {}): Promise<ScriptedGateway> {
  const dim = opts.dim ?? 768;
  const script: Script = { chat: opts.chat ?? (() => 'ok'), embed: opts.embed, models: opts.models ?? ['svc-llm', 'svc-embed'] };
  const requests: GatewayRequest[] = [];
  const abandoned: GatewayRequest[] = [];
  const failures = new Map<string, { status: number; times: number }[]>();

  function takeFailure(path: string): number | undefined {
    const queue = failures.get(path);
    const head = queue?.[0];
    if (!head) return undefined;
    if (--head.times <= 0) queue!.shift();
    return head.status;
  }

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const text = await readBody(req);
    let body: any = undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      return send(res, 400, errorBody('request body is not JSON'));
    }
    const request = { method: req.method ?? 'GET', path, body };
    if (opts.record !== false) requests.push(request);

    const failure = takeFailure(path);
    if (failure === 0) return void req.socket.destroy();
    if (failure !== undefined) return send(res, failure, errorBody(`scripted failure ${failure}`));

    if (req.method === 'GET' && path === '/v1/models') {
      return send(res, 200, {
        object: 'list',
        data: script.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted' })),
      });
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      const out = script.chat(body);
      if (isRaw(out)) return send(res, out.status, out.body);
      if (body?.stream === true) return streamChat(res, body, out, script, () => abandoned.push(request));
      return send(res, 200, chatCompletion(body?.model ?? 'unknown', out));
    }
    if (req.method === 'POST' && path === '/v1/embeddings') {
      const inputs: string[] = Array.isArray(body?.input) ? body.input : [String(body?.input ?? '')];
      if (opts.embedDelayMs) await new Promise((r) => setTimeout(r, opts.embedDelayMs));
      const out = script.embed ? script.embed(body) : await createOfflineEmbedder(body?.dimensions ?? dim).embed(inputs);
      if (isRaw(out)) return send(res, out.status, out.body);
      const base64 = body?.encoding_format === 'base64';
      const data = out.map((v, index) => ({ object: 'embedding', index, embedding: base64 ? toBase64(v) : v }));
      return send(res, 200, { object: 'list', data, model: body?.model ?? 'unknown', usage: { prompt_tokens: 0, total_tokens: 0 } });
    }
    return send(res, 404, errorBody(`no route ${req.method} ${path}`));
  }

  const server = createServer((req, res) => {
    answer(req, res).catch((err) => send(res, 500, errorBody(String(err))));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    abandoned,
    script,
    failNext(path, status, times = 1) {
      const key = normalise(path);
      failures.set(key, [...(failures.get(key) ?? []), { status, times }]);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function chatCompletion(model: string, content: string) {
  return {
    id: `chatcmpl-scripted-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

async function streamChat(res: ServerResponse, body: any, content: string, script: Script, onAbandoned: () => void): Promise<void> {
  const model = body?.model ?? 'unknown';
  const id = `chatcmpl-scripted-${Date.now()}`;
  const chunk = (delta: object, extra: object = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: null, logprobs: null }],
    ...extra,
  });
  let finished = false;
  res.on('close', () => {
    if (!finished) onAbandoned();
  });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const write = (data: unknown) => res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  const pieces = content.match(/\s*\S+/g) ?? [];
  write(chunk({ role: 'assistant', content: '' }));
  for (const [i, piece] of pieces.entries()) {
    if (res.destroyed) return;
    if (script.breakStreamAfter !== undefined && i >= script.breakStreamAfter) {
      finished = true;
      return void res.socket?.destroy();
    }
    if (script.streamDelayMs) await new Promise((r) => setTimeout(r, script.streamDelayMs));
    if (res.destroyed) return;
    write(chunk({ content: piece }));
  }
  if (body?.stream_options?.include_usage) {
    write({
      id,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [],
      usage: { prompt_tokens: 1, completion_tokens: pieces.length, total_tokens: 1 + pieces.length },
    });
  }
  write('[DONE]');
  finished = true;
  res.end();
}

const errorBody = (message: string) => ({ error: { message, type: 'scripted_error', code: null } });

function toBase64(v: number[]): string {
  const buf = Buffer.alloc(v.length * 4);
  v.forEach((x, i) => {
    buf.writeFloatLE(x, i * 4);
  });
  return buf.toString('base64');
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body ?? null);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
