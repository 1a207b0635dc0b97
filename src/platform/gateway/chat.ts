import { GatewayError } from './errors.ts';
import { createClient } from './client.ts';
import { withRetries } from './retry.ts';

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
  /** The gateway's declared models (`GET /models`), as the gateway lists them. */
  listModels(): Promise<GatewayModel[]>;
}

export type OpenAiChatOptions = { baseURL: string; apiKey?: string; attempts?: number; backoffMs?: number; timeoutMs?: number };

// Chat completions and the model list from any OpenAI-compatible gateway, non-streaming.
export function createOpenAiChat(opts: OpenAiChatOptions): ChatModel {
  const { client, url } = createClient(opts);
  const policy = { attempts: opts.attempts ?? 3, backoffMs: opts.backoffMs ?? 500 };

  return {
    async complete(req) {
      const res = await withRetries(policy, { action: 'chat completion', model: req.model, url }, () =>
        client.chat.completions.create({
          model: req.model,
          messages: req.messages,
          ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
          ...(req.maxTokens !== undefined ? { max_tokens: req.maxTokens } : {}),
          stream: false,
        }, req.signal ? { signal: req.signal } : undefined),
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
    },

    async listModels() {
      const page = await withRetries(policy, { action: 'listing models', url }, () => client.models.list());
      // The SDK pages lazily; a gateway's model list is one page, but follow any further ones it offers.
      const out: GatewayModel[] = [];
      for await (const m of page) out.push(m as unknown as GatewayModel);
      return out;
    },
  };
}
