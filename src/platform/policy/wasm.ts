import { readFile } from 'node:fs/promises';
import { loadPolicy } from '@open-policy-agent/opa-wasm';
import { asDecision, denied, type PolicyEngine } from './types.ts';

export const DEFAULT_BUNDLE_DIR = new URL('../../../policies/build/', import.meta.url);

/**
 * The committed bundle evaluated in-process: loaded once, evaluated synchronously (tens of microseconds). A bundle
 * that cannot be loaded yields an engine that denies everything and reports not ready, so a service still
 * starts and answers, closed.
 */
export async function createWasmPolicyEngine(opts: { bundleDir?: string | URL } = {}): Promise<PolicyEngine> {
  const dir = opts.bundleDir ?? DEFAULT_BUNDLE_DIR;
  const file = (name: string) => (typeof dir === 'string' ? `${dir.replace(/\/?$/, '/')}${name}` : new URL(name, dir));
  let policy: Awaited<ReturnType<typeof loadPolicy>> | undefined;
  let loadError = '';
  try {
    policy = await loadPolicy(await readFile(file('policy.wasm')));
    policy.setData(JSON.parse(await readFile(file('data.json'), 'utf8')));
  } catch (err) {
    loadError = `cannot load the policy bundle from ${String(dir)}: ${String((err as Error)?.message ?? err)}`;
    policy = undefined;
  }
  return {
    kind: 'wasm',
    async decide(name, input) {
      if (!policy) return denied(loadError);
      try {
        const results = policy.evaluate(input, `${name}/decision`) as { result?: unknown }[];
        return asDecision(results[0]?.result);
      } catch (err) {
        return denied(String((err as Error)?.message ?? err));
      }
    },
    ready: async () => policy !== undefined,
  };
}
