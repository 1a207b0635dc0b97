import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOfflineEmbedder, createOpenAiChat, createOpenAiEmbedder, GatewayError } from '../../src/platform/gateway/index.ts';
import { tokenize } from '../../src/platform/gateway/offline-embedder.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';

let gw: ScriptedGateway;
beforeEach(async () => {
  gw = await startScriptedGateway({ dim: 16, models: ['svc-llm', 'svc-embed'] });
});
afterEach(async () => {
  await gw.close();
});

const embedder = (extra: Partial<Parameters<typeof createOpenAiEmbedder>[0]> = {}) =>
  createOpenAiEmbedder({ baseURL: gw.url, apiKey: 'sk-secret-123', model: 'svc-embed', dim: 16, backoffMs: 1, ...extra });
const embedCalls = () => gw.requests.filter((r) => r.path === '/v1/embeddings');

describe('OpenAI-compatible embedder', () => {
  it('embeds in batches, in order, with the offline vectors the gateway serves', async () => {
    const texts = Array.from({ length: 7 }, (_, i) => `text number ${i}`);
    const vectors = await embedder({ batchSize: 3 }).embed(texts);
    expect(embedCalls().map((r) => r.body.input.length)).toEqual([3, 3, 1]);
    expect(embedCalls()[0]!.body.encoding_format).toBe('float');
    expect(vectors).toEqual(await createOfflineEmbedder(16).embed(texts));
  });

  it('restores order from the index field when the gateway answers out of order', async () => {
    gw.script.embed = (body) => ({
      status: 200,
      body: { object: 'list', data: body.input.map((_: string, i: number) => ({ index: i, embedding: Array(16).fill(i) })).reverse() },
    });
    const vectors = await embedder().embed(['a', 'b', 'c']);
    expect(vectors.map((v) => v[0])).toEqual([0, 1, 2]);
  });

  it('decodes base64 vectors when the gateway sends them whatever was asked', async () => {
    const v = Array.from({ length: 16 }, (_, i) => i / 8 - 1);
    const b64 = Buffer.from(new Float32Array(v).buffer).toString('base64');
    gw.script.embed = () => ({ status: 200, body: { object: 'list', data: [{ index: 0, embedding: b64 }] } });
    expect(await embedder().embed(['x'])).toEqual([v]);
  });

  it('returns an empty list for no texts without calling the gateway', async () => {
    expect(await embedder().embed([])).toEqual([]);
    expect(embedCalls()).toHaveLength(0);
  });

  it.each([503, 429, 408, 0])('retries after %i and then succeeds', async (status) => {
    gw.failNext('/v1/embeddings', status, 2);
    const vectors = await embedder().embed(['retry me']);
    expect(vectors).toHaveLength(1);
    expect(embedCalls()).toHaveLength(3);
  });

  it('gives up after three failed attempts with a GatewayError naming model and URL but not the key', async () => {
    gw.failNext('embeddings', 502, 5);
    const err = await embedder()
      .embed(['x'])
      .catch((e) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.message).toContain("'svc-embed'");
    expect(err.message).toContain(gw.url);
    expect(err.message).toContain('after 3 attempts');
    expect(err.message).toContain('502');
    expect(err.message).not.toContain('sk-secret-123');
    expect(embedCalls()).toHaveLength(3);
  });

  it('honours a different attempt count', async () => {
    gw.failNext('embeddings', 500, 5);
    await expect(embedder({ attempts: 2 }).embed(['x'])).rejects.toThrow(GatewayError);
    expect(embedCalls()).toHaveLength(2);
  });

  it.each([400, 401, 404, 422])('does not retry %i', async (status) => {
    gw.failNext('embeddings', status, 1);
    const err = await embedder()
      .embed(['x'])
      .catch((e) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.message).toContain('not retried');
    expect(err.details.status).toBe(status);
    expect(embedCalls()).toHaveLength(1);
  });

  it('rejects vectors of the wrong dimension', async () => {
    const err = await embedder({ dim: 768 })
      .embed(['x'])
      .catch((e) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.message).toContain('expected dimension 768, got 16');
  });

  it('rejects a vector holding a value pgvector cannot store, in base64 or JSON', async () => {
    const nan = Buffer.from(Float32Array.of(...Array(15).fill(0.5), NaN).buffer).toString('base64');
    for (const embedding of [nan, [...Array(15).fill(0.5), 1e39], [...Array(15).fill(0.5), '0.5']]) {
      gw.script.embed = () => ({ status: 200, body: { object: 'list', data: [{ index: 0, embedding }] } });
      const err = await embedder()
        .embed(['x'])
        .catch((e) => e);
      expect(err).toBeInstanceOf(GatewayError);
      expect(err.message).toContain('vector 0 is not a list of finite float32 numbers');
    }
  });

  it('rejects an answer with the wrong number of vectors', async () => {
    gw.script.embed = () => [Array(16).fill(0)];
    const err = await embedder()
      .embed(['a', 'b'])
      .catch((e) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.message).toContain('expected 2 vectors, got 1');
  });

  it('reports an unreachable gateway after its attempts', async () => {
    const url = gw.url;
    await gw.close();
    const err = await createOpenAiEmbedder({ baseURL: url, model: 'm', dim: 16, backoffMs: 1 })
      .embed(['x'])
      .catch((e) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.message).toMatch(/after 3 attempts: no answer/);
    gw = await startScriptedGateway();
  });
});

describe('OpenAI-compatible chat', () => {
  const chat = () => createOpenAiChat({ baseURL: gw.url, backoffMs: 1 });

  it('completes with the scripted content, model and usage', async () => {
    gw.script.chat = (body) => `you said: ${body.messages.at(-1).content}`;
    const res = await chat().complete({ model: 'svc-llm', messages: [{ role: 'user', content: 'hello' }], temperature: 0 });
    expect(res).toEqual({ content: 'you said: hello', model: 'svc-llm', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } });
    expect(gw.requests[0]!.body).toMatchObject({ model: 'svc-llm', temperature: 0 });
  });

  it('retries a 500 and fails a 401 at once', async () => {
    gw.failNext('chat/completions', 500, 1);
    expect((await chat().complete({ model: 'svc-llm', messages: [{ role: 'user', content: 'x' }] })).content).toBe('ok');
    gw.failNext('chat/completions', 401, 1);
    await expect(chat().complete({ model: 'svc-llm', messages: [{ role: 'user', content: 'x' }] })).rejects.toThrow(/HTTP 401/);
    expect(gw.requests).toHaveLength(3);
  });

  it('lists the gateway models', async () => {
    const models = await chat().listModels();
    expect(models.map((m) => m.id)).toEqual(['svc-llm', 'svc-embed']);
    expect(models[0]!.owned_by).toBe('scripted');
  });
});

describe('offline embedder', () => {
  const off = createOfflineEmbedder();
  const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

  it('is deterministic, 768-dimensional and says it is offline', async () => {
    const [a, b] = await off.embed(['The quick brown fox', 'The quick brown fox']);
    expect(a).toEqual(b);
    expect(a).toHaveLength(768);
    expect(off.offline).toBe(true);
  });

  it('returns unit vectors, and a zero vector for text without words', async () => {
    const [a, empty, punct] = await off.embed(['Invoices from 2024 were late', '', ' ,;! ']);
    expect(Math.sqrt(cos(a!, a!))).toBeCloseTo(1, 10);
    for (const v of [empty!, punct!]) {
      expect(v.every((x) => x === 0)).toBe(true);
    }
  });

  it('places similar texts closer than unrelated ones', async () => {
    const [q, near, far] = await off.embed([
      'how do I reset my password',
      'steps to reset a forgotten password',
      'quarterly revenue grew in the northern region',
    ]);
    expect(cos(q!, near!)).toBeGreaterThan(cos(q!, far!) + 0.2);
  });

  it('folds case and accents', async () => {
    const [a, b] = await off.embed(['Café Crème', 'cafe creme']);
    expect(a).toEqual(b);
  });

  it('splits ASCII text into the same words as the Unicode rule, every ASCII character included', () => {
    const unicodeRule = (t: string) =>
      t
        .normalize('NFKD')
        .replace(/\p{M}+/gu, '')
        .toLowerCase()
        .match(/[\p{L}\p{N}]+/gu) ?? [];
    const every = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c)).join('');
    for (const t of [every, `Revenue_Q3 grew 12%; NET-income: ${every} A1b2C3`, '', '...', 'Café Crème 42'])
      expect(tokenize(t)).toEqual(unicodeRule(t));
  });

  // Vectors already stored were made by this definition: a faster implementation must give them bit for bit.
  it('gives the vectors of its definition: each word +-1 and each adjacent pair "a b" +-0.5, by FNV-1a, normalised', async () => {
    const fnv = (s: string, seed: number) => {
      let h = seed;
      for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
      return h;
    };
    const definition = (words: string[], dim: number) => {
      const v = new Array<number>(dim).fill(0);
      const features = [...words.map((w) => [w, 1] as const), ...words.slice(1).map((w, i) => [`${words[i]} ${w}`, 0.5] as const)];
      for (const [f, weight] of features) {
        const i = fnv(f, 0x811c9dc5) % dim;
        v[i] = v[i]! + (fnv(f, 0x9747b28c) % 2 === 0 ? weight : -weight);
      }
      const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
      return v.map((x) => x / norm);
    };
    const texts = ['rivers and hills and rivers', 'Ünïcode wörds, ﬁne ligatures; 42 x y z z', 'one', 'a b a b a b c'.repeat(50)];
    for (const dim of [768, 7]) {
      const got = await createOfflineEmbedder(dim).embed(texts);
      expect(got).toEqual(texts.map((t) => definition(tokenize(t), dim)));
    }
  });

  it('honours a smaller dimension', async () => {
    const [v] = await createOfflineEmbedder(32).embed(['a few words here']);
    expect(v).toHaveLength(32);
  });
});
