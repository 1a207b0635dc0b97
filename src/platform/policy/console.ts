import type { Caller } from '../identity.ts';
import type { PolicyDecision, PolicyEngine } from './types.ts';

export type ConsoleName = 'retrieval' | 'explore';

/** May this caller use a service's web console: the svc.console decision (roles per console in its data). */
export function decideConsole(policy: PolicyEngine, caller: Caller, console: ConsoleName): Promise<PolicyDecision> {
  return policy.decide('console', { user: caller.user, roles: caller.roles, console });
}
