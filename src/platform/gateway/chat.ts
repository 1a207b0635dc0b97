import { GatewayError } from './errors.ts';
import { createClient } from './client.ts';
import { describeFailure, withRetries } from './retry.ts';
import { describeSpan, inTracedSpan, recordTokenUsage, tracer } from '../tracing.ts';

export type ChatMessage = { role: 'system' | 'user' | 'assistant'; content: string };
export type ChatRequest = {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  maxTokens?: number;
  /** Cancels the call (and any further attempt): a caller that went away. */
  signal?: AbortSignal;
};
export type ChatUsage = { promptTokens: number; completionTokens: number; totalTokens: number };
export type ChatResult = { content: string; model: string; usage?: ChatUsage };
export type GatewayModel = { id: string; owned_by?: string; [k: string]: unknown };

export interface ChatModel {
  complete(req: ChatRequest): Promise<ChatResult>;
  /**
   * The same completion streamed: `onDelta` gets the text as it comes, the result holds all of it. Attempts are
   * retried only until the gateway starts answering; a stream that breaks off after that fails (no half answer twice).
   */
  stream(req: ChatRequest, onDelta: (text: string) => void): Promise<ChatResult>;
  /** The gateway's declared models (`GET /models`), as the gateway lists them. */
  listModels(): Promise<GatewayModel[]>;
}

export type OpenAiChatOptions = { baseURL: string; apiKey?: string; attempts?: number; backoffMs?: number; timeoutMs?: number };

// Chat completions (whole or streamed) and the model list from any OpenAI-compatible gateway.
export function createOpenAiChat(opts: OpenAiChatOptions): ChatModel {
  const { client, url } = createClient(opts);
  const policy = { attempts: opts.attempts ?? 3, backoffMs: opts.backoffMs ?? 500 };

  return {
    complete: (req) => modelCall(req, () => complete(req)),
    stream: (req, onDelta) => modelCall(req, () => stream(req, onDelta)),

    async listModels() {
      const page = await withRetries(policy, { action: 'listing models', url }, async () => (await client()).models.list());
      // The SDK pages lazily; a gateway's model list is one page, but follow any further ones it offers.
      const out: GatewayModel[] = [];
      for await (const m of page) out.push(m as unknown as GatewayModel);
      return out;
    },
  };

  async function complete(req: ChatRequest): Promise<ChatResult> {
    const res = await withRetries(policy, { action: 'chat completion', model: req.model, url }, async () =>
      (await client()).chat.completions.create({ ...requestBody(req), stream: false }, req.signal ? { signal: req.signal } : undefined),
    );
    const content = res?.choices?.[0]?.message?.content;
    if (typeof content !== 'string') {
      throw new GatewayError(`chat completion with model '${req.model}' at ${url} failed: the answer has no message content`, {
        model: req.model,
        url,
      });
    }
    const u = res.usage;
    return {
      content,
      model: res.model || req.model,
      ...(u ? { usage: { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, totalTokens: u.total_tokens } } : {}),
    };
  }

  async function stream(req: ChatRequest, onDelta: (text: string) => void): Promise<ChatResult> {
    const what = { action: 'chat completion', model: req.model, url };
    const stream = await withRetries(policy, what, async () =>
      (await client()).chat.completions.create(
        { ...requestBody(req), stream: true, stream_options: { include_usage: true } },
        req.signal ? { signal: req.signal } : undefined,
      ),
    );
    let content = '';
    let model = req.model;
    let usage: ChatUsage | undefined;
    try {
      for await (const chunk of stream) {
        if (chunk.model) model = chunk.model;
        const text = chunk.choices?.[0]?.delta?.content;
        if (text) {
          content += text;
          onDelta(text);
        }
        const u = chunk.usage;
        if (u) usage = { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, totalTokens: u.total_tokens };
      }
    } catch (err) {
      throw new GatewayError(
        `chat completion with model '${req.model}' at ${url} broke off while streaming: ${describeFailure(err)}`,
        what,
        { cause: err },
      );
    }
    // the SDK ends an aborted stream quietly: a cancelled answer must not pass for a whole one
    if (req.signal?.aborted)
      throw new GatewayError(`chat completion with model '${req.model}' at ${url} was cancelled by its caller`, what);
    return { content, model, ...(usage ? { usage } : {}) };
  }
}

/** What a completion asks, whole or streamed. */
const requestBody = (req: ChatRequest) => ({
  model: req.model,
  messages: req.messages,
  ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
  ...(req.maxTokens !== undefined ? { max_tokens: req.maxTokens } : {}),
});

const spans = tracer('gateway');

/** A model call as MLflow shows one: a CHAT_MODEL span with the messages, the answer and the tokens it cost. */
const modelCall = (req: ChatRequest, call: () => Promise<ChatResult>): Promise<ChatResult> =>
  inTracedSpan(
    spans,
    'chat',
    async (span) => {
      describeSpan(span, { inputs: { model: req.model, messages: req.messages } });
      const result = await call();
      describeSpan(span, { outputs: { model: result.model, content: result.content } });
      const u = result.usage;
      recordTokenUsage(span, u && { inputTokens: u.promptTokens, outputTokens: u.completionTokens, totalTokens: u.totalTokens });
      return result;
    },
    'CHAT_MODEL',
  );
