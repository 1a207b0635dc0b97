import { createHash } from 'node:crypto';

// Step 1's answer cache. The specification keys it on the question and the role; the key here also holds the user
// and the model, because the engine applies row filters per user: an answer must never cross users.
// The policy revision is part of the key: an answer given under a withdrawn grant is never served again.
export const cacheKey = (parts: { question: string; role: string; user: string; model: string; policy?: string | undefined }): string =>
  createHash('sha256')
    .update(JSON.stringify([parts.question.trim(), parts.role, parts.user, parts.model, parts.policy ?? '']))
    .digest('hex');

export type AnswerCache<T> = {
  get(key: string): T | undefined;
  set(key: string, value: T): void;
  readonly size: number;
  readonly bytes: number;
};

/**
 * Least recently used, with a time to live, bounded by count and by bytes (an entry's JSON length); an entry larger
 * than the whole budget is not kept. Size 0 or ttl 0 disables it.
 */
export function createAnswerCache<T>(opts: { size: number; ttlSeconds: number; maxBytes?: number; now?: () => number }): AnswerCache<T> {
  const now = opts.now ?? Date.now;
  const maxBytes = opts.maxBytes ?? Number.POSITIVE_INFINITY;
  const entries = new Map<string, { value: T; expires: number; bytes: number }>();
  let bytes = 0;
  const drop = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    bytes -= entry.bytes;
  };
  return {
    get(key) {
      const hit = entries.get(key);
      if (!hit) return undefined;
      drop(key);
      if (hit.expires <= now()) return undefined;
      entries.set(key, hit); // most recently used goes last
      bytes += hit.bytes;
      return hit.value;
    },
    set(key, value) {
      if (opts.size <= 0 || opts.ttlSeconds <= 0) return;
      drop(key);
      const weight = JSON.stringify(value).length;
      if (weight > maxBytes) return;
      entries.set(key, { value, expires: now() + opts.ttlSeconds * 1000, bytes: weight });
      bytes += weight;
      while (entries.size > opts.size || bytes > maxBytes) drop(entries.keys().next().value!);
    },
    get size() {
      return entries.size;
    },
    get bytes() {
      return bytes;
    },
  };
}
