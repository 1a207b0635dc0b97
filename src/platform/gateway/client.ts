import type OpenAI from 'openai';
import { safeUrl } from './errors.ts';

export type ClientOptions = { baseURL: string; apiKey?: string; timeoutMs?: number };

type Sdk = typeof import('openai');
let sdk: Sdk | undefined;
let loading: Promise<Sdk> | undefined;

// The SDK loads with an adapter's first call (2 to 3 MB less of svc dev's main heap): the services build their
// adapters at start whether or not a gateway is ever asked (`svc dev` asks none), and retries read its error classes
// only after a call.
export const loadOpenAi = (): Promise<Sdk> => (loading ??= import('openai').then((m) => (sdk = m)));
/** The SDK once a call has loaded it; undefined before, when no error can have come from it. */
export const loadedOpenAi = (): Sdk | undefined => sdk;

// One SDK client per adapter. The SDK's own retries are off: withRetries owns the policy so the attempt count
// in the specification ("tried up to 3 times") is exactly what happens.
export function createClient(opts: ClientOptions): { client: () => Promise<OpenAI>; url: string } {
  let client: Promise<OpenAI> | undefined;
  const make = ({ default: OpenAI }: Sdk) =>
    new OpenAI({
      baseURL: opts.baseURL,
      // Gateways without authentication still need some key: the SDK refuses to start without one.
      apiKey: opts.apiKey || 'unused',
      maxRetries: 0,
      timeout: opts.timeoutMs ?? 60_000,
    });
  return { client: () => (client ??= loadOpenAi().then(make)), url: safeUrl(opts.baseURL) };
}
