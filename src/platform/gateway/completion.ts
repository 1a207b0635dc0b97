import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { loadOpenAi } from './client.ts';

// A chat completion that is not streamed, POSTed on a kept-alive connection of its own agent and its JSON answer
// parsed: the `openai` SDK's request path around the same exchange (its fetch and web streams, its headers, its
// request log's formatting and its response parser) took about 0.75 ms of the thread a call, against 0.2 ms for the
// exchange itself (bench/explore/trino.ts --steps). Failures are raised as the SDK's own error classes, made as the
// SDK makes them, so the retry policy (retry.ts) and the messages are unchanged. Streamed completions and the model
// list stay on the SDK.

export type Completion = (body: object, signal?: AbortSignal) => Promise<unknown>;

export function createCompletion(opts: { baseURL: string; apiKey?: string; timeoutMs?: number }): Completion {
  const url = new URL(`${opts.baseURL.replace(/\/+$/, '')}/chat/completions`);
  const secure = url.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  // gateways without authentication still get a key, as the SDK sends one
  const authorization = `Bearer ${opts.apiKey || 'unused'}`;

  return async (body, signal) => {
    const sdk = await loadOpenAi();
    if (signal?.aborted) throw new sdk.APIUserAbortError();
    const payload = Buffer.from(JSON.stringify(body));
    return new Promise<unknown>((resolve, reject) => {
      let why: 'timeout' | 'aborted' | undefined;
      const stop = (reason: 'timeout' | 'aborted') => {
        why ??= reason;
        req.destroy();
      };
      const timer = setTimeout(() => stop('timeout'), timeoutMs);
      const onAbort = () => stop('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const failed = (cause: unknown) => {
        done();
        if (why === 'aborted') reject(new sdk.APIUserAbortError());
        else if (why === 'timeout') reject(new sdk.APIConnectionTimeoutError());
        else reject(new sdk.APIConnectionError({ cause: cause instanceof Error ? cause : new Error(String(cause)) }));
      };
      const req = send(
        url,
        {
          method: 'POST',
          agent,
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json',
            Authorization: authorization,
            'Content-Length': payload.length,
          },
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', failed);
          res.on('aborted', () => failed(new Error('the gateway closed the connection mid-answer')));
          res.on('end', () => {
            if (!res.complete) return failed(new Error('the gateway closed the connection mid-answer'));
            done();
            const text = Buffer.concat(chunks).toString('utf8');
            const json = parseJson(text);
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) return resolve(json ?? text);
            const headers = new Headers();
            for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
            reject(sdk.APIError.generate(status, json as object | undefined, json === undefined ? text : undefined, headers));
          });
        },
      );
      req.on('error', failed);
      req.end(payload);
    });
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
