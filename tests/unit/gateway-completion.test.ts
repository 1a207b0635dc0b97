import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiChat, GatewayError } from '../../src/platform/gateway/index.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';

// A chat completion that is not streamed goes on its own kept-alive connection (completion.ts): what it sends, and
// how each way of failing ends, as the SDK's path ended them.
let gw: ScriptedGateway;
let silent: Server;
let silentUrl: string;
beforeAll(async () => {
  gw = await startScriptedGateway({ models: ['svc-llm'] });
  // accepts the request and never answers
  silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await gw.close();
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
});

const ask = { model: 'svc-llm', messages: [{ role: 'user' as const, content: 'x' }] };

describe('chat completion off the SDK', () => {
  it('sends the request body the SDK sent, one answer after another', async () => {
    const chat = createOpenAiChat({ baseURL: gw.url, apiKey: 'sk-test', backoffMs: 1 });
    gw.script.chat = (body) => `you said: ${body.messages.at(-1).content}`;
    for (let i = 0; i < 3; i++) expect((await chat.complete({ ...ask, maxTokens: 7 })).content).toBe('you said: x');
    for (const r of gw.requests.slice(-3))
      expect(r.body).toEqual({ model: 'svc-llm', messages: ask.messages, max_tokens: 7, stream: false });
  });

  it("fails a 400 at once with the gateway's message", async () => {
    gw.script.chat = () => ({ status: 400, body: { error: { message: 'context too long', type: 'invalid_request_error' } } });
    const before = gw.requests.length;
    const err = await createOpenAiChat({ baseURL: gw.url, backoffMs: 1 })
      .complete(ask)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).message).toMatch(/not retried: HTTP 400: 400 context too long/);
    expect((err as GatewayError).details.status).toBe(400);
    expect(gw.requests.length - before).toBe(1);
    gw.script.chat = () => 'ok';
  });

  it('retries a dropped connection, then says there was no answer', async () => {
    gw.failNext('chat/completions', 0, 2);
    const before = gw.requests.length;
    const err = await createOpenAiChat({ baseURL: gw.url, backoffMs: 1, attempts: 2 })
      .complete(ask)
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/after 2 attempts: no answer/);
    expect(gw.requests.length - before).toBe(2);
  });

  it('gives up on a gateway that does not answer within the time limit', async () => {
    const started = performance.now();
    const err = await createOpenAiChat({ baseURL: silentUrl, timeoutMs: 200, attempts: 1 })
      .complete(ask)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as Error).message).toMatch(/no answer \(Request timed out\.\)/);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('stops when its caller goes away, without another attempt', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = await createOpenAiChat({ baseURL: silentUrl, attempts: 3, backoffMs: 1 })
      .complete({ ...ask, signal: controller.signal })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as Error).message).toMatch(/not retried: Request was aborted\./);
  });
});
