import { z } from 'zod';
import { int, loadConfig, type Env } from '../config.ts';
import { parseLimit, type Limit } from './rates.ts';

// What costs money, one setting each (SVC_LIMIT_<NAME>), the default limit per user; a role's limit in the policy
// data (data.svc.config.limits.roles) overrides it. Each action's unit is what one charge counts.
export const LIMITED_ACTIONS = {
  'explore.question': { setting: 'LIMIT_EXPLORE_QUESTIONS', fallback: '120/h', unit: 'questions' },
  'explore.trino_bytes': { setting: 'LIMIT_EXPLORE_TRINO_BYTES', fallback: '1099511627776/h', unit: 'bytes scanned' },
  'retrieval.answer': { setting: 'LIMIT_RETRIEVAL_ANSWERS', fallback: '120/h', unit: 'answers' },
  'retrieval.embedding': { setting: 'LIMIT_RETRIEVAL_EMBEDDINGS', fallback: '200000/h', unit: 'embedded chunks' },
} as const;

export type LimitedAction = keyof typeof LIMITED_ACTIONS;
/** Each action's default limit, and how long a replica holds units it leased (SVC_LIMIT_LEASE_MS; 0: no lease). */
export type LimitSettings = Record<LimitedAction, Limit> & { leaseMs: number };

const LEASE_MS_DEFAULT = 3000;

const limit = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const parsed = parseLimit(v ?? fallback);
      if (typeof parsed === 'object' && 'error' in parsed) {
        ctx.addIssue({ code: 'custom', message: parsed.error });
        return z.NEVER;
      }
      return parsed;
    });

const shape = {
  ...Object.fromEntries(Object.values(LIMITED_ACTIONS).map((a) => [a.setting, limit(a.fallback)])),
  LIMIT_LEASE_MS: int(LEASE_MS_DEFAULT, 0),
};

export function loadLimitSettings(env: Env): LimitSettings {
  const raw = loadConfig(shape, env) as Record<string, Limit> & { LIMIT_LEASE_MS: number };
  const limits = Object.fromEntries(Object.entries(LIMITED_ACTIONS).map(([action, a]) => [action, raw[a.setting]!]));
  return { ...limits, leaseMs: raw.LIMIT_LEASE_MS } as LimitSettings;
}
