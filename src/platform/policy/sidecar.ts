import { asDecision, describeError, engineError, entrypointOf, isDecisionName, type PolicyEngine } from './types.ts';

/**
 * An OPA server over its REST API: `POST /v1/data/svc/<name>/decision` with `{input}` answers `{result}`, or `{}`
 * when the decision is undefined. Unreachable, slow, an error status or an odd body: deny, saying which.
 */
export function createSidecarPolicyEngine(opts: { url: string; timeoutMs?: number; fetch?: typeof fetch }): PolicyEngine {
  const base = opts.url.replace(/\/+$/, '');
  const timeoutMs = opts.timeoutMs ?? 2000;
  const doFetch = opts.fetch ?? fetch;
  return {
    kind: 'sidecar',
    async decide(name, input) {
      if (!isDecisionName(name)) return engineError(`unknown decision '${String(name)}'`);
      const entrypoint = entrypointOf(name);
      const where = `OPA at ${base} (${entrypoint})`;
      try {
        const res = await doFetch(`${base}/v1/data/${entrypoint}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ input }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (!res.ok) {
          await res.body?.cancel();
          return engineError(`${where} answered HTTP ${res.status}`);
        }
        const body: unknown = await res.json();
        if (typeof body !== 'object' || body === null) return engineError(`${where} answered a body that is not an object`);
        return asDecision((body as { result?: unknown }).result, entrypoint);
      } catch (err) {
        const timedOut = err instanceof Error && err.name === 'TimeoutError';
        return engineError(timedOut ? `${where} did not answer within ${timeoutMs} ms` : `${where} failed: ${describeError(err)}`);
      }
    },
    async ready() {
      try {
        const res = await doFetch(`${base}/health`, { signal: AbortSignal.timeout(timeoutMs) });
        await res.body?.cancel();
        return res.ok;
      } catch {
        return false;
      }
    },
  };
}
