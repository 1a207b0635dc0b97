// Per-user limits on what costs money (docs/audit.md): token buckets in the database, per (user, service, action).
export { createLimiter, type Limiter } from './limiter.ts';
export { describeLimit, parseLimit, type Limit, type Rate } from './rates.ts';
export { LIMITED_ACTIONS, loadLimitSettings, type LimitedAction, type LimitSettings } from './settings.ts';
