// The policy port. Every table, dashboard, collection and console decision goes through it, and every failure of
// the engine (a throw, a timeout, an unreachable sidecar, an undefined or malformed result) is a deny whose reason
// says what failed. The adapters log nothing: the caller logs the reason it was given.
// Which decisions exist is said by the Rego alone: each is the rule `decision` of package `svc.<name>`, annotated
// `entrypoint: true` (policies/svc/<name>/<name>.rego). The build takes its entrypoints from those annotations, and
// each adapter lists the decisions from what its engine holds, so no list of names is kept here.
export type PolicyDecision = { allow: boolean; reason: string; [field: string]: unknown };

export interface PolicyEngine {
  /** Which adapter answers: for start-up logs and tests. */
  readonly kind: 'wasm' | 'sidecar';
  /** `name` is a decision's package under svc (`tables` for svc.tables). A decision the engine lacks denies. */
  decide(name: string, input: object): Promise<PolicyDecision>;
  /** The decisions the engine holds, sorted: its entrypoint annotations. Rejects when the engine cannot tell. */
  decisions(): Promise<string[]>;
  ready(): Promise<boolean>;
  /**
   * The roles the policy deciding now knows (its data's `svc.config.known_roles`), which follow a new bundle as it
   * is taken into force; undefined while none is loaded, or where the engine cannot tell (the OPA sidecar).
   */
  knownRoles?(): readonly string[] | undefined;
  /** The bundle revision deciding now (for /ready and the decision log); undefined while none is loaded. */
  readonly revision: string | undefined;
  /** The port's own counters in Prometheus text (bundle loads and refusals, decision-log drops), for /metrics. */
  metrics?(): Promise<string>;
  close?(): Promise<void>;
}

/** A decision's name is a Rego package segment: it goes into a path, so nothing else is ever sent. */
export const isDecisionName = (name: unknown): name is string => typeof name === 'string' && /^[a-z][a-z0-9_]*$/.test(name);

/** The Rego rule behind a decision: `policies/svc/<name>/` declares `package svc.<name>` with a `decision` rule. */
export const entrypointOf = (name: string): string => `svc/${name}/decision`;

/** The decision an entrypoint stands for, or undefined when it is not one (any other annotated rule). */
export function decisionOf(entrypoint: string): string | undefined {
  const [svc, name, rule, ...rest] = entrypoint.split('/');
  return svc === 'svc' && rule === 'decision' && rest.length === 0 && isDecisionName(name) ? name : undefined;
}

export const engineError = (what: string): PolicyDecision => ({ allow: false, reason: `policy engine error: ${what}` });

/** Engines throw strings (the wasm SDK), Errors, or anything else: one line for a reason. */
export const describeError = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * A result counts only when it holds `allow: boolean` and `reason: string`; anything else denies. Other fields of
 * the result come along (the limits decision names the caller's role limits).
 */
export function asDecision(result: unknown, entrypoint: string): PolicyDecision {
  if (result === undefined) return engineError(`${entrypoint} is undefined for this input`);
  if (typeof result === 'object' && result !== null) {
    const { allow, reason } = result as Record<string, unknown>;
    if (typeof allow === 'boolean' && typeof reason === 'string') return { ...(result as Record<string, unknown>), allow, reason };
  }
  return engineError(`${entrypoint} returned a malformed decision: ${preview(result)}`);
}

const preview = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
};
