import { asDecision, denied, type PolicyEngine } from './types.ts';

/** An OPA server over its REST API (`POST /v1/data/<decision>/decision`). Unreachable, slow or odd: deny. */
export function createSidecarPolicyEngine(opts: { url: string; timeoutMs?: number; fetch?: typeof fetch }): PolicyEngine {
  const base = opts.url.replace(/\/+$/, '');
  const timeoutMs = opts.timeoutMs ?? 2000;
  const doFetch = opts.fetch ?? fetch;
  return {
    kind: 'sidecar',
    async decide(name, input) {
      try {
        const res = await doFetch(`${base}/v1/data/${name}/decision`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ input }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (!res.ok) return denied(`OPA answered ${res.status} for ${name}`);
        const body = (await res.json()) as { result?: unknown };
        return asDecision(body.result);
      } catch (err) {
        return denied(`OPA at ${base} failed: ${String((err as Error)?.message ?? err)}`);
      }
    },
    async ready() {
      try {
        const res = await doFetch(`${base}/health`, { signal: AbortSignal.timeout(timeoutMs) });
        return res.ok;
      } catch {
        return false;
      }
    },
  };
}
