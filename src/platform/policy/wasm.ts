import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPolicy } from '@open-policy-agent/opa-wasm';
import { asDecision, decisionOf, describeError, engineError, entrypointOf, type PolicyEngine } from './types.ts';

/** The committed build, found from this file rather than the working directory, so any cwd works. */
export const DEFAULT_BUILD_DIR = fileURLToPath(new URL('../../../policies/build', import.meta.url));

type LoadedPolicy = Awaited<ReturnType<typeof loadPolicy>>;
type Loaded = { policy: LoadedPolicy; decisions: string[] };

/**
 * The compiled policies evaluated in-process: loaded once, each decision a synchronous call into the same instance
 * (a few microseconds). A build that cannot be loaded gives an engine that denies everything and reports not
 * ready, so a service still starts and answers, closed. The decisions are the build's entrypoints, which
 * `opa build` took from the Rego's `entrypoint: true` annotations.
 */
export async function createWasmPolicyEngine(opts: { buildDir?: string } = {}): Promise<PolicyEngine> {
  const dir = opts.buildDir ?? DEFAULT_BUILD_DIR;
  let loaded: Loaded | undefined;
  let loadError = '';
  try {
    loaded = await load(dir);
  } catch (err) {
    loadError = `cannot load the policy build in ${dir}: ${describeError(err)}`;
  }
  return {
    kind: 'wasm',
    async decide(name, input) {
      if (!loaded) return engineError(loadError);
      if (!loaded.decisions.includes(name)) return engineError(`unknown decision '${String(name)}'`);
      const entrypoint = entrypointOf(name);
      try {
        const results: unknown = loaded.policy.evaluate(input, entrypoint);
        if (!Array.isArray(results)) return engineError(`${entrypoint} returned no result set`);
        // An undefined decision comes back as an empty result set.
        return asDecision((results[0] as { result?: unknown } | undefined)?.result, entrypoint);
      } catch (err) {
        return engineError(`${entrypoint} failed: ${describeError(err)}`);
      }
    },
    async decisions() {
      if (!loaded) throw new Error(loadError);
      return [...loaded.decisions];
    },
    ready: async () => loaded !== undefined,
  };
}

async function load(dir: string): Promise<Loaded> {
  const [wasm, data] = await Promise.all([readFile(join(dir, 'policy.wasm')), readFile(join(dir, 'data.json'), 'utf8')]);
  const policy = await loadPolicy(wasm);
  const entrypoints = Object.keys(policy.entrypoints as Record<string, number>);
  const decisions = entrypoints.flatMap((e) => decisionOf(e) ?? []).sort();
  if (decisions.length === 0) throw new Error(`the build declares no decision (its entrypoints: ${entrypoints.join(', ') || 'none'})`);
  policy.setData(JSON.parse(data) as object);
  return { policy, decisions };
}
