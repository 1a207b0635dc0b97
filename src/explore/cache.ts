import { createHash } from 'node:crypto';

// Step 1's answer cache. The specification keys it on the question and the role; the key here also holds the user
// and the model, because the engine applies row filters per user: an answer must never cross users.
export const cacheKey = (parts: { question: string; role: string; user: string; model: string }): string =>
  createHash('sha256')
    .update(JSON.stringify([parts.question.trim(), parts.role, parts.user, parts.model]))
    .digest('hex');

export type AnswerCache<T> = {
  get(key: string): T | undefined;
  set(key: string, value: T): void;
  readonly size: number;
};

/** Least recently used, with a time to live; size 0 or ttl 0 disables it. */
export function createAnswerCache<T>(opts: { size: number; ttlSeconds: number; now?: () => number }): AnswerCache<T> {
  const now = opts.now ?? Date.now;
  const entries = new Map<string, { value: T; expires: number }>();
  return {
    get(key) {
      const hit = entries.get(key);
      if (!hit) return undefined;
      entries.delete(key);
      if (hit.expires <= now()) return undefined;
      entries.set(key, hit); // most recently used goes last
      return hit.value;
    },
    set(key, value) {
      if (opts.size <= 0 || opts.ttlSeconds <= 0) return;
      entries.delete(key);
      entries.set(key, { value, expires: now() + opts.ttlSeconds * 1000 });
      while (entries.size > opts.size) entries.delete(entries.keys().next().value!);
    },
    get size() {
      return entries.size;
    },
  };
}
