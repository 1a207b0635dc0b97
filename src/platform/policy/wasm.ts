import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPolicy } from '@open-policy-agent/opa-wasm';
import { asDecision, DECISION_NAMES, describeError, engineError, entrypointOf, isDecisionName, type PolicyEngine } from './types.ts';

/** The committed build, found from this file rather than the working directory, so any cwd works. */
export const DEFAULT_BUILD_DIR = fileURLToPath(new URL('../../../policies/build', import.meta.url));

type LoadedPolicy = Awaited<ReturnType<typeof loadPolicy>>;

/**
 * The compiled policies evaluated in-process: loaded once, each decision a synchronous call into the same instance
 * (a few microseconds). A build that cannot be loaded gives an engine that denies everything and reports not
 * ready, so a service still starts and answers, closed.
 */
export async function createWasmPolicyEngine(opts: { buildDir?: string } = {}): Promise<PolicyEngine> {
  const dir = opts.buildDir ?? DEFAULT_BUILD_DIR;
  let policy: LoadedPolicy | undefined;
  let loadError = '';
  try {
    policy = await load(dir);
  } catch (err) {
    loadError = `cannot load the policy build in ${dir}: ${describeError(err)}`;
  }
  return {
    kind: 'wasm',
    async decide(name, input) {
      if (!policy) return engineError(loadError);
      if (!isDecisionName(name)) return engineError(`unknown decision '${String(name)}'`);
      const entrypoint = entrypointOf(name);
      try {
        const results: unknown = policy.evaluate(input, entrypoint);
        if (!Array.isArray(results)) return engineError(`${entrypoint} returned no result set`);
        // An undefined decision comes back as an empty result set.
        return asDecision((results[0] as { result?: unknown } | undefined)?.result, entrypoint);
      } catch (err) {
        return engineError(`${entrypoint} failed: ${describeError(err)}`);
      }
    },
    ready: async () => policy !== undefined,
  };
}

async function load(dir: string): Promise<LoadedPolicy> {
  const [wasm, data] = await Promise.all([readFile(join(dir, 'policy.wasm')), readFile(join(dir, 'data.json'), 'utf8')]);
  const policy = await loadPolicy(wasm);
  const entrypoints = policy.entrypoints as Record<string, number>;
  const missing = DECISION_NAMES.map(entrypointOf).filter((e) => !(e in entrypoints));
  if (missing.length > 0) throw new Error(`the build has no entrypoint ${missing.join(', ')}`);
  policy.setData(JSON.parse(data) as object);
  return policy;
}
