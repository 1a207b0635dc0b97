import { GatewayError } from './errors.ts';
import { createClient } from './client.ts';
import { withRetries } from './retry.ts';
import { describeSpan, inTracedSpan, tracer } from '../tracing.ts';

const spans = tracer('gateway');

export interface Embedder {
  readonly model: string;
  readonly dim: number;
  /** True for the local lexical fallback, so callers and logs can say they are not using a real model. */
  readonly offline: boolean;
  /** One vector per text, in the order given. */
  embed(texts: string[]): Promise<number[][]>;
}

export type OpenAiEmbedderOptions = {
  baseURL: string;
  apiKey?: string;
  model: string;
  dim: number;
  batchSize?: number;
  attempts?: number;
  backoffMs?: number;
  timeoutMs?: number;
};

// Embeddings from any OpenAI-compatible gateway. Texts go in batches of `batchSize`; each batch is one call tried
// up to `attempts` times. A batch whose answer has the wrong count or dimension is an error, never truncated.
export function createOpenAiEmbedder(opts: OpenAiEmbedderOptions): Embedder {
  const { client, url } = createClient(opts);
  const batchSize = Math.max(1, opts.batchSize ?? 64);
  const policy = { attempts: opts.attempts ?? 3, backoffMs: opts.backoffMs ?? 500 };
  const fail = (what: string) =>
    new GatewayError(`embedding with model '${opts.model}' at ${url} failed: ${what}`, { model: opts.model, url });

  async function embedBatch(batch: string[]): Promise<number[][]> {
    const res = await withRetries(policy, { action: 'embedding', model: opts.model, url }, async () =>
      // 'float' asks for plain JSON arrays; without it the SDK asks for base64 and decodes it itself.
      (await client()).embeddings.create({ model: opts.model, input: batch, encoding_format: 'float' }),
    );
    const data = Array.isArray(res?.data) ? res.data : [];
    if (data.length !== batch.length) throw fail(`expected ${batch.length} vectors, got ${data.length}`);
    const ordered = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return ordered.map((item, i) => {
      const vector = toVector(item.embedding as unknown);
      if (!vector) throw fail(`vector ${i} is not a list of finite float32 numbers`);
      if (vector.length !== opts.dim) throw fail(`expected dimension ${opts.dim}, got ${vector.length}`);
      return vector;
    });
  }

  return {
    model: opts.model,
    dim: opts.dim,
    offline: false,
    // the texts stay out of the span: a document's chunks are not the trace's to keep
    embed: (texts) =>
      inTracedSpan(
        spans,
        'embeddings',
        async (span) => {
          describeSpan(span, { inputs: { model: opts.model, texts: texts.length } });
          const out: number[][] = [];
          for (let i = 0; i < texts.length; i += batchSize) out.push(...(await embedBatch(texts.slice(i, i + batchSize))));
          return out;
        },
        'EMBEDDING',
      ),
  };
}

// Accepts a JSON array of numbers, or a base64 string of little-endian float32 (what gateways send when they
// answer in base64 whatever was asked). Every value must be a finite float32, as pgvector stores it.
export function toVector(raw: unknown): number[] | null {
  let out: number[];
  if (typeof raw === 'string') {
    const bytes = Buffer.from(raw, 'base64');
    if (bytes.length % 4 !== 0) return null;
    out = new Array<number>(bytes.length / 4);
    for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  } else if (Array.isArray(raw) || ArrayBuffer.isView(raw)) {
    out = Array.from(raw as ArrayLike<unknown>, (v) => (typeof v === 'number' ? v : NaN));
  } else return null;
  return out.every((v) => Number.isFinite(Math.fround(v))) ? out : null;
}
