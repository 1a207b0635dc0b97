import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPolicy } from '@open-policy-agent/opa-wasm';
import { contentRevision } from './bundle.ts';
import type { DecisionLog } from './decision-log.ts';
import { asDecision, decisionOf, describeError, engineError, entrypointOf, type PolicyDecision, type PolicyEngine } from './types.ts';

/** The committed build, found from this file rather than the working directory, so any cwd works. */
export const DEFAULT_BUILD_DIR = fileURLToPath(new URL('../../../policies/build', import.meta.url));

/** One compiled policy with its data, ready to decide: what a reloading engine swaps whole. */
export type LoadedPolicy = {
  policy: Awaited<ReturnType<typeof loadPolicy>>;
  decisions: string[];
  revision: string;
  /** Its data's `svc.config.known_roles`: the roles a token may bring to this policy. */
  knownRoles: string[];
  /**
   * Its decisions depend on their input alone: the build asks the SDK for no builtin (time.now_ns, rand.intn,
   * http.send and the like are the SDK's), so the same input under this policy always gets the same decision.
   */
  pure: boolean;
};

/**
 * The compiled policies evaluated in-process: loaded once, each decision a synchronous call into the same instance
 * (a few microseconds). A build that cannot be loaded gives an engine that denies everything and reports not
 * ready, so a service still starts and answers, closed. The decisions are the build's entrypoints, which
 * `opa build` took from the Rego's `entrypoint: true` annotations. Its revision names the build's content.
 */
export async function createWasmPolicyEngine(opts: { buildDir?: string; decisionLog?: DecisionLog } = {}): Promise<PolicyEngine> {
  const dir = opts.buildDir ?? DEFAULT_BUILD_DIR;
  let loaded: LoadedPolicy | undefined;
  let loadError = '';
  try {
    const [wasm, data] = await Promise.all([readFile(join(dir, 'policy.wasm')), readFile(join(dir, 'data.json'))]);
    loaded = await loadWasmPolicy(
      wasm,
      data,
      contentRevision(
        new Map([
          ['policy.wasm', wasm],
          ['data.json', data],
        ]),
      ),
    );
  } catch (err) {
    loadError = `cannot load the policy build in ${dir}: ${describeError(err)}`;
  }
  return wasmEngine({ current: () => loaded, unavailable: () => loadError, decisionLog: opts.decisionLog });
}

/** A wasm engine over whatever policy `current()` holds at the moment of each decision. */
export function wasmEngine(opts: {
  current: () => LoadedPolicy | undefined;
  unavailable: () => string;
  decisionLog?: DecisionLog | undefined;
  close?: () => Promise<void>;
}): PolicyEngine {
  return {
    kind: 'wasm',
    get revision() {
      return opts.current()?.revision;
    },
    async decide(name, input) {
      const loaded = opts.current();
      const decision = loaded ? decideOnce(loaded, name, input) : engineError(opts.unavailable());
      opts.decisionLog?.record({ path: entrypointOf(String(name)), input, result: decision, revision: loaded?.revision });
      return decision;
    },
    async decisions() {
      const loaded = opts.current();
      if (!loaded) throw new Error(opts.unavailable());
      return [...loaded.decisions];
    },
    ready: async () => opts.current() !== undefined,
    knownRoles: () => opts.current()?.knownRoles,
    close: async () => {
      await opts.close?.();
      await opts.decisionLog?.close();
    },
  };
}

export function evaluateWasm(loaded: LoadedPolicy, name: string, input: object): PolicyDecision {
  return evaluated(loaded, name, input).decision;
}

/** The decision, and whether the policy itself gave it (not an engine error, which may not happen again). */
function evaluated(loaded: LoadedPolicy, name: string, input: object): { decision: PolicyDecision; byPolicy: boolean } {
  if (!loaded.decisions.includes(name)) return { decision: engineError(`unknown decision '${String(name)}'`), byPolicy: false };
  const entrypoint = entrypointOf(name);
  try {
    const results: unknown = loaded.policy.evaluate(input, entrypoint);
    if (!Array.isArray(results)) return { decision: engineError(`${entrypoint} returned no result set`), byPolicy: false };
    // An undefined decision comes back as an empty result set.
    return { decision: asDecision((results[0] as { result?: unknown } | undefined)?.result, entrypoint), byPolicy: true };
  } catch (err) {
    return { decision: engineError(`${entrypoint} failed: ${describeError(err)}`), byPolicy: false };
  }
}

// A pure policy's decisions, kept per loaded policy (a reload is a new object, so nothing decided under the old one
// is ever answered again) and per exact input (its JSON, as the SDK hands it to the policy): a question asks the
// same tables and limits of the same caller again and again, and each evaluation is a few tens of microseconds of
// wasm. Only what the policy answered is kept, never an engine error. Every decision still goes to the decision log.
const decided = new WeakMap<LoadedPolicy, Map<string, PolicyDecision>>();
const KEPT_DECISIONS = 10_000;
const KEPT_INPUT_CHARS = 2_000;

function decideOnce(loaded: LoadedPolicy, name: string, input: object): PolicyDecision {
  if (!loaded.pure) return evaluateWasm(loaded, name, input);
  let json: string | undefined;
  try {
    json = JSON.stringify(input);
  } catch {
    return evaluateWasm(loaded, name, input); // what cannot be serialised is the engine's to refuse
  }
  if (json === undefined || json.length > KEPT_INPUT_CHARS) return evaluateWasm(loaded, name, input);
  const key = `${name}\n${json}`;
  let kept = decided.get(loaded);
  const hit = kept?.get(key);
  if (hit) return { ...hit };
  const { decision, byPolicy } = evaluated(loaded, name, input);
  if (!byPolicy) return decision;
  if (!kept) decided.set(loaded, (kept = new Map()));
  if (kept.size >= KEPT_DECISIONS) kept.clear(); // a bound; decisions come back on demand
  kept.set(key, { ...decision });
  return decision;
}

/** The builtins a compiled policy needs the SDK to provide (none when all it calls is compiled in); throws when unreadable. */
function sdkBuiltins(policy: LoadedPolicy['policy']): string[] {
  const { wasmInstance, mem } = policy as unknown as {
    wasmInstance: { exports: { builtins(): number; opa_json_dump(addr: number): number } };
    mem: WebAssembly.Memory;
  };
  const at = wasmInstance.exports.opa_json_dump(wasmInstance.exports.builtins());
  const bytes = new Uint8Array(mem.buffer);
  const end = bytes.indexOf(0, at);
  return Object.keys(JSON.parse(new TextDecoder().decode(bytes.subarray(at, end))) as object);
}

/** True only when the build is known to need no SDK builtin: anything unreadable counts as impure. */
function isPure(policy: LoadedPolicy['policy']): boolean {
  try {
    return sdkBuiltins(policy).length === 0;
  } catch {
    return false;
  }
}

/** Instantiates a compiled policy with its data; throws when either is unusable or it declares no decision. */
export async function loadWasmPolicy(wasm: Uint8Array, data: Uint8Array, revision: string): Promise<LoadedPolicy> {
  const policy = await loadPolicy(wasm);
  const entrypoints = Object.keys(policy.entrypoints as Record<string, number>);
  const decisions = entrypoints.flatMap((e) => decisionOf(e) ?? []).sort();
  if (decisions.length === 0) throw new Error(`the build declares no decision (its entrypoints: ${entrypoints.join(', ') || 'none'})`);
  const parsed = JSON.parse(new TextDecoder().decode(data)) as object;
  policy.setData(parsed);
  return { policy, decisions, revision, knownRoles: knownRolesOf(parsed), pure: isPure(policy) };
}

/** `svc.config.known_roles` of a policy's data (policies/data.json); none when it names none. */
export function knownRolesOf(data: unknown): string[] {
  const roles = (data as { svc?: { config?: { known_roles?: unknown } } } | null)?.svc?.config?.known_roles;
  return Array.isArray(roles) ? roles.filter((r): r is string => typeof r === 'string') : [];
}
