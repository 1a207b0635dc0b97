import { loadedOpenAi } from './client.ts';
import { GatewayError } from './errors.ts';

export type RetryPolicy = { attempts: number; backoffMs: number };

// Transient failures worth another try: no answer at all, timeouts, conflicts, rate limits and server errors.
// Anything else (400, 401, 404, 422 ...) will fail the same way again, so it fails at once.
export function isRetryable(err: unknown): boolean {
  const sdk = loadedOpenAi();
  if (!sdk) return false;
  if (err instanceof sdk.APIConnectionError) return true;
  if (err instanceof sdk.APIError) {
    const s = err.status;
    if (s === undefined) return false;
    return s === 408 || s === 409 || s === 429 || s >= 500;
  }
  return false;
}

export function describeFailure(err: unknown): string {
  const sdk = loadedOpenAi();
  if (sdk && err instanceof sdk.APIConnectionError) return `no answer (${err.message})`;
  if (sdk && err instanceof sdk.APIError) return err.status ? `HTTP ${err.status}: ${err.message}` : err.message;
  return err instanceof Error ? err.message : String(err);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Runs `call` up to `attempts` times with exponential backoff (backoffMs, 2x, 4x ...) plus a little jitter so
// many callers do not retry in step. The last failure becomes a GatewayError naming what was tried.
export async function withRetries<T>(
  policy: RetryPolicy,
  what: { action: string; model?: string; url: string },
  call: () => Promise<T>,
): Promise<T> {
  const attempts = Math.max(1, Math.floor(policy.attempts));
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      const retry = isRetryable(err) && attempt < attempts;
      if (!retry) {
        const APIError = loadedOpenAi()?.APIError;
        const status = APIError && err instanceof APIError ? err.status : undefined;
        const tries = isRetryable(err) ? `after ${attempt} attempt${attempt === 1 ? '' : 's'}` : 'not retried';
        const model = what.model ? ` with model '${what.model}'` : '';
        throw new GatewayError(
          `${what.action}${model} at ${what.url} failed ${tries}: ${describeFailure(err)}`,
          { model: what.model, url: what.url, status, attempts: attempt },
          { cause: err },
        );
      }
      const base = policy.backoffMs * 2 ** (attempt - 1);
      await sleep(base + Math.random() * base * 0.25);
    }
  }
}
