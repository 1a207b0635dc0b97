import type { DecisionLog } from './decision-log.ts';
import {
  asDecision,
  decisionOf,
  describeError,
  engineError,
  entrypointOf,
  isDecisionName,
  type PolicyDecision,
  type PolicyEngine,
} from './types.ts';

/**
 * An OPA server over its REST API: `POST /v1/data/svc/<name>/decision` with `{input}` answers `{result}`, or `{}`
 * when the decision is undefined (one OPA does not hold included). Unreachable, slow, an error status or an odd
 * body: deny, saying which. The decisions it holds are read from the annotations of the modules it serves. Each
 * answer carries its provenance, so the revision of the bundle OPA decided with is the one logged.
 */
export function createSidecarPolicyEngine(opts: {
  url: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
  decisionLog?: DecisionLog;
}): PolicyEngine {
  const base = opts.url.replace(/\/+$/, '');
  const timeoutMs = opts.timeoutMs ?? 2000;
  const doFetch = opts.fetch ?? fetch;
  let revision: string | undefined;
  const ask = async (name: string, input: object, answered: { revision?: string }): Promise<PolicyDecision> => {
    if (!isDecisionName(name)) return engineError(`unknown decision '${String(name)}'`);
    const entrypoint = entrypointOf(name);
    const where = `OPA at ${base} (${entrypoint})`;
    try {
      const res = await doFetch(`${base}/v1/data/${entrypoint}?provenance`, {
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
      answered.revision = revisionOf(body);
      revision = answered.revision ?? revision;
      return asDecision((body as { result?: unknown }).result, entrypoint);
    } catch (err) {
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      return engineError(timedOut ? `${where} did not answer within ${timeoutMs} ms` : `${where} failed: ${describeError(err)}`);
    }
  };
  return {
    kind: 'sidecar',
    get revision() {
      return revision;
    },
    async decide(name, input) {
      const answered: { revision?: string } = {};
      const decision = await ask(name, input, answered);
      opts.decisionLog?.record({ path: entrypointOf(String(name)), input, result: decision, revision: answered.revision });
      return decision;
    },
    close: async () => opts.decisionLog?.close(),
    async decisions() {
      const res = await doFetch(`${base}/v1/policies`, { signal: AbortSignal.timeout(timeoutMs) }).catch((err: unknown) => {
        throw new Error(`OPA at ${base} failed to list its policies: ${describeError(err)}`);
      });
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(`OPA at ${base} answered HTTP ${res.status} to the list of its policies`);
      }
      return annotatedDecisions(await res.json());
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

/** The revision of the one bundle OPA serves, from `provenance.bundles`; undefined when it serves files or several. */
function revisionOf(body: object): string | undefined {
  const bundles = (body as { provenance?: { bundles?: Record<string, { revision?: unknown }> } }).provenance?.bundles;
  const revisions = Object.values(bundles ?? {}).map((b) => b.revision);
  return revisions.length === 1 && typeof revisions[0] === 'string' && revisions[0] !== '' ? revisions[0] : undefined;
}

type Term = { value?: unknown };
type Module = { ast?: { package?: { path?: Term[] }; rules?: { head?: { ref?: Term[] }; annotations?: { entrypoint?: unknown }[] }[] } };

/** `GET /v1/policies` answers every module's AST: a rule annotated `entrypoint: true` is a decision when it is one. */
function annotatedDecisions(body: unknown): string[] {
  const modules = (body as { result?: Module[] } | null)?.result;
  if (!Array.isArray(modules)) throw new Error('OPA answered a list of policies without a result');
  const names = new Set<string>();
  for (const { ast } of modules) {
    // The package path starts with the `data` variable; a rule's ref with its name.
    const pkg = (ast?.package?.path ?? []).slice(1).map((t) => String(t.value));
    for (const rule of ast?.rules ?? []) {
      if (!rule.annotations?.some((a) => a.entrypoint === true)) continue;
      const name = decisionOf([...pkg, ...(rule.head?.ref ?? []).map((t) => String(t.value))].join('/'));
      if (name) names.add(name);
    }
  }
  return [...names].sort();
}
