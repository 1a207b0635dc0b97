import { z } from 'zod';
import { loadConfig, type Env } from '../config.ts';
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
export type LimitSettings = Record<LimitedAction, Limit>;

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

const shape = Object.fromEntries(Object.values(LIMITED_ACTIONS).map((a) => [a.setting, limit(a.fallback)]));

export function loadLimitSettings(env: Env): LimitSettings {
  const raw = loadConfig(shape, env) as Record<string, Limit>;
  return Object.fromEntries(Object.entries(LIMITED_ACTIONS).map(([action, a]) => [action, raw[a.setting]!])) as LimitSettings;
}
