// The policy port. Every table, dashboard and collection decision goes through it, and every failure of the
// engine (a throw, a timeout, an unreachable sidecar, an undefined or malformed result) is a deny whose reason says
// what failed. The adapters log nothing: the caller logs the reason it was given.
export type PolicyDecisionName = 'tables' | 'dashboards' | 'collections';
export type PolicyDecision = { allow: boolean; reason: string };

export interface PolicyEngine {
  /** Which adapter answers: for start-up logs and tests. */
  readonly kind: 'wasm' | 'sidecar';
  decide(name: PolicyDecisionName, input: object): Promise<PolicyDecision>;
  ready(): Promise<boolean>;
  close?(): Promise<void>;
}

export const DECISION_NAMES: readonly PolicyDecisionName[] = ['tables', 'dashboards', 'collections'];

/** The Rego rule behind a decision: `policies/<name>/` declares `package svc.<name>` with a `decision` rule. */
export const entrypointOf = (name: PolicyDecisionName): string => `svc/${name}/decision`;

export const isDecisionName = (name: unknown): name is PolicyDecisionName =>
  typeof name === 'string' && (DECISION_NAMES as readonly string[]).includes(name);

export const engineError = (what: string): PolicyDecision => ({ allow: false, reason: `policy engine error: ${what}` });

/** Engines throw strings (the wasm SDK), Errors, or anything else: one line for a reason. */
export const describeError = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** A result counts only when it is exactly `{allow: boolean, reason: string}`; anything else denies. */
export function asDecision(result: unknown, entrypoint: string): PolicyDecision {
  if (result === undefined) return engineError(`${entrypoint} is undefined for this input`);
  if (typeof result === 'object' && result !== null) {
    const { allow, reason } = result as Record<string, unknown>;
    if (typeof allow === 'boolean' && typeof reason === 'string') return { allow, reason };
  }
  return engineError(`${entrypoint} returned a malformed decision: ${preview(result)}`);
}

const preview = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
};
