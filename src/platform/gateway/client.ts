import OpenAI from 'openai';
import { safeUrl } from './errors.ts';

export type ClientOptions = { baseURL: string; apiKey?: string; timeoutMs?: number };

// One SDK client per adapter. The SDK's own retries are off: withRetries owns the policy so the attempt count
// in the specification ("tried up to 3 times") is exactly what happens.
export function createClient(opts: ClientOptions): { client: OpenAI; url: string } {
  const client = new OpenAI({
    baseURL: opts.baseURL,
    // Gateways without authentication still need some key: the SDK refuses to start without one.
    apiKey: opts.apiKey || 'unused',
    maxRetries: 0,
    timeout: opts.timeoutMs ?? 60_000,
  });
  return { client, url: safeUrl(opts.baseURL) };
}
