// The policy port. Every table, dashboard and collection decision goes through it, and every failure of the
// engine (a throw, a timeout, an undefined or malformed result) is a deny whose reason says what failed.
export type PolicyDecisionName = 'tables' | 'dashboards' | 'collections';
export type PolicyDecision = { allow: boolean; reason: string };

export interface PolicyEngine {
  readonly kind: 'wasm' | 'sidecar';
  decide(name: PolicyDecisionName, input: object): Promise<PolicyDecision>;
  ready(): Promise<boolean>;
  close?(): Promise<void>;
}

export const denied = (what: string): PolicyDecision => ({ allow: false, reason: `policy engine error: ${what}` });

/** A result counts only when it is exactly `{allow: boolean, reason: string}`; anything else denies. */
export function asDecision(result: unknown): PolicyDecision {
  if (typeof result === 'object' && result !== null) {
    const { allow, reason } = result as Record<string, unknown>;
    if (typeof allow === 'boolean' && typeof reason === 'string') return { allow, reason };
  }
  return denied(`malformed or undefined decision ${JSON.stringify(result) ?? 'undefined'}`);
}
