import { Counter, type Registry } from 'prom-client';
import type { Sql } from '../db/index.ts';
import { forbidden, ProblemError } from '../errors.ts';
import type { Caller } from '../identity.ts';
import type { PolicyEngine } from '../policy/index.ts';
import { createLeases } from './lease.ts';
import { describeLimit, mostGenerous, parseLimit, type Limit } from './rates.ts';
import { LIMITED_ACTIONS, type LimitedAction, type LimitSettings } from './settings.ts';

// Per-user limits on what costs money. A service charges before it spends: `await limiter.charge(caller,
// 'retrieval.answer')`. The caller's limit is the configured one unless the `limits` policy decision names a role
// of theirs with its own; the bucket lives in the database, so every replica draws from the same one.

export type Limiter = {
  /**
   * Charges `cost` units (default 1) of `action` to the caller, or throws: 429 with Retry-After when the bucket is
   * short, 413 when the cost is above what the limit ever allows at once, 403 when the policy refuses the caller.
   */
  charge(caller: Caller, action: LimitedAction, cost?: number): Promise<void>;
  /** Reports what was charged from leases and gives them back (at shutdown; a lease not given back expires, spent). */
  close?(): Promise<void>;
};

export function createLimiter(deps: { db: Sql; policy: PolicyEngine; limits: LimitSettings; registry: Registry }): Limiter {
  const requests = new Counter({
    name: 'svc_limit_requests_total',
    help: 'Charges against usage limits by user, action and outcome (allowed, refused, too_large)',
    labelNames: ['user', 'action', 'outcome'] as const,
    registers: [deps.registry],
  });
  const consumed = new Counter({
    name: 'svc_limit_consumed_total',
    help: 'Units charged against usage limits by user and action (questions, answers, embedded chunks, bytes)',
    labelNames: ['user', 'action'] as const,
    registers: [deps.registry],
  });

  const leases = createLeases(deps.db, deps.limits.leaseMs);

  async function limitOf(caller: Caller, action: LimitedAction): Promise<Limit> {
    const [service, name] = action.split('.') as [string, string];
    const decision = await deps.policy.decide('limits', { user: caller.user, roles: caller.roles, service, action: name });
    if (!decision.allow) throw forbidden(`Usage limits: ${decision.reason}`);
    const overrides = Array.isArray(decision.limits) ? decision.limits.flatMap(roleLimit) : [];
    return mostGenerous(overrides) ?? deps.limits[action];
  }

  return {
    async charge(caller, action, cost = 1) {
      const limit = await limitOf(caller, action);
      if (limit === 'unlimited' || cost <= 0) return;
      const { unit } = LIMITED_ACTIONS[action];
      if (cost > limit.capacity) {
        requests.inc({ user: caller.user, action, outcome: 'too_large' });
        throw new ProblemError(
          413,
          'Content Too Large',
          `This needs ${cost} ${unit}, more than your limit of ${describeLimit(limit)} allows at once (${action}); send less at a time.`,
          { action, cost, capacity: limit.capacity },
        );
      }
      const [service, name] = action.split('.') as [string, string];
      const taken = await leases.take({ user: caller.user, service, action: name }, limit, cost);
      if (!taken.ok) {
        requests.inc({ user: caller.user, action, outcome: 'refused' });
        throw new ProblemError(
          429,
          'Too Many Requests',
          `You have used your limit of ${describeLimit(limit)} ${unit} (${action}); try again in ${taken.retryAfterSeconds} s.`,
          { action, retryAfter: taken.retryAfterSeconds },
          { 'Retry-After': String(taken.retryAfterSeconds) },
        );
      }
      requests.inc({ user: caller.user, action, outcome: 'allowed' });
      consumed.inc({ user: caller.user, action }, cost);
    },
    close: () => leases.close(),
  };
}

/** A role's limit from the policy data (`{role, limit: "20/h"}`); one that does not parse refuses, closed. */
function roleLimit(entry: unknown): Limit[] {
  const e = (typeof entry === 'object' && entry !== null ? entry : {}) as { role?: unknown; limit?: unknown };
  const parsed = typeof e.limit === 'string' ? parseLimit(e.limit) : { error: 'not a string' };
  if (typeof parsed === 'object' && 'error' in parsed) {
    throw forbidden(
      `Usage limits: the policy data's limit for role ${String(e.role)} is unusable (${parsed.error}); an administrator must fix data.svc.config.limits.`,
    );
  }
  return [parsed];
}
