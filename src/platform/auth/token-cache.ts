import type { Caller } from '../identity.ts';

// Tokens whose signature and claims verified, keyed by the whole token (signature included): the same bytes verify
// the same way, so a browser session's next request skips the signature check. What stays checked on every hit: the
// token's own time window (exp, nbf, with the skew), that the key set it verified with is still the one in use, and
// that its roles were kept by the known roles in force (the same list: a new policy bundle brings a new one).
// Bounded; the oldest entry goes first.

type Entry = { caller: Caller; exp: number; nbf: number | undefined; keysVersion: number; knownRoles: readonly string[] };

export type TokenCache = {
  get(token: string, nowSeconds: number, keysVersion: number, knownRoles: readonly string[]): Caller | undefined;
  set(token: string, entry: Entry): void;
  readonly size: number;
};

export function createTokenCache(maxEntries: number, skewSeconds: number): TokenCache {
  const entries = new Map<string, Entry>();
  return {
    get(token, nowSeconds, keysVersion, knownRoles) {
      const hit = entries.get(token);
      if (!hit) return undefined;
      const inWindow = hit.exp > nowSeconds - skewSeconds && (hit.nbf === undefined || hit.nbf <= nowSeconds + skewSeconds);
      if (!inWindow || hit.keysVersion !== keysVersion || hit.knownRoles !== knownRoles) {
        entries.delete(token); // verified afresh, which also says precisely what is wrong now
        return undefined;
      }
      return { ...hit.caller, roles: [...hit.caller.roles], groups: [...hit.caller.groups] };
    },
    set(token, entry) {
      if (maxEntries <= 0) return;
      entries.delete(token);
      entries.set(token, entry);
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
    get size() {
      return entries.size;
    },
  };
}
