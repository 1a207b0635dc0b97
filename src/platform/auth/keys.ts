import { createLocalJWKSet, errors, type JSONWebKeySet, type JWSHeaderParameters } from 'jose';
import { z } from 'zod';
import { invalidToken, issuerUnavailable } from './errors.ts';

// The issuer's signing keys: discovery, then its jwks_uri, cached. A token whose `kid` is not in the set refetches
// it at most once per cooldown (a key the IdP just published is accepted without a restart, and a flood of made-up
// kids costs the issuer one request per cooldown). Requests that arrive while a fetch is under way wait for it
// instead of starting their own. A failed fetch is not retried for a second, so a dead issuer is not hammered.

export type Fetch = (url: string, init?: { signal?: AbortSignal; headers?: Record<string, string> }) => Promise<Response>;

export type IssuerKeysOptions = {
  issuer: string;
  fetch: Fetch;
  /** Milliseconds since the epoch; a test moves it. */
  now: () => number;
  cooldownMs: number;
  maxAgeMs: number;
  timeoutMs?: number;
  failureBackoffMs?: number;
};

type KeySet = ReturnType<typeof createLocalJWKSet>;
type Loaded = { keys: KeySet; fetchedAt: number };
export type KeyResolver = (header: JWSHeaderParameters) => Promise<CryptoKey>;

const discoverySchema = z.object({ issuer: z.string(), jwks_uri: z.url({ protocol: /^https?$/ }) });

export type IssuerKeys = {
  /** The key for a token's header, refetching the set for an unknown kid when the cooldown allows. */
  keyFor: KeyResolver;
  /** Loads the keys now (start-up); false when the issuer cannot be reached, which is logged by the caller. */
  warm(): Promise<boolean>;
  /** How many times the key set was fetched (discovery not counted): for tests and metrics. */
  readonly fetches: number;
  /** Whether the key set in use is younger than its maximum age. */
  isFresh(): boolean;
  /** Changes whenever a fetched key set replaces the one in use (what was verified with the old one is re-checked). */
  readonly version: number;
};

export function createIssuerKeys(opts: IssuerKeysOptions): IssuerKeys {
  const timeoutMs = opts.timeoutMs ?? 3000;
  const failureBackoffMs = opts.failureBackoffMs ?? 1000;
  const discoveryUrl = `${opts.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let jwksUri: string | undefined;
  let loaded: Loaded | undefined;
  let inflight: Promise<Loaded> | undefined;
  let lastAttemptAt = -Infinity;
  let lastFailure: Error | undefined;
  let fetches = 0;
  let version = 0;

  async function getJson(url: string, what: string): Promise<unknown> {
    let res: Response;
    try {
      res = await opts.fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
    } catch (cause) {
      throw issuerUnavailable(`The identity provider could not be reached for its ${what} (${url}); try again shortly.`, cause);
    }
    if (!res.ok) {
      throw issuerUnavailable(`The identity provider answered ${res.status} for its ${what} (${url}); try again shortly.`);
    }
    try {
      return await res.json();
    } catch (cause) {
      throw issuerUnavailable(`The identity provider's ${what} (${url}) is not JSON.`, cause);
    }
  }

  async function load(): Promise<Loaded> {
    lastAttemptAt = opts.now();
    try {
      if (!jwksUri) {
        const parsed = discoverySchema.safeParse(await getJson(discoveryUrl, 'discovery document'));
        if (!parsed.success) throw issuerUnavailable(`The discovery document at ${discoveryUrl} has no usable jwks_uri.`);
        // OpenID Connect Discovery §4.3: the document must name exactly the issuer it was fetched for.
        if (parsed.data.issuer !== opts.issuer) {
          throw issuerUnavailable(
            `The discovery document at ${discoveryUrl} names the issuer ${parsed.data.issuer}, not ${opts.issuer}: check SVC_OIDC_ISSUER.`,
          );
        }
        jwksUri = parsed.data.jwks_uri;
      }
      fetches += 1;
      let keys: KeySet;
      try {
        keys = createLocalJWKSet((await getJson(jwksUri, 'key set')) as JSONWebKeySet);
      } catch (err) {
        jwksUri = undefined; // the next attempt discovers again, in case the key set moved
        if (err instanceof errors.JWKSInvalid) throw issuerUnavailable(`The identity provider's key set is malformed.`, err);
        throw err;
      }
      loaded = { keys, fetchedAt: opts.now() };
      version += 1;
      lastFailure = undefined;
      return loaded;
    } catch (err) {
      lastFailure = err as Error;
      throw err;
    }
  }

  /** One fetch at a time; everyone else waits for it. */
  function refresh(): Promise<Loaded> {
    inflight ??= load().finally(() => {
      inflight = undefined;
    });
    return inflight;
  }

  async function current(): Promise<Loaded> {
    if (inflight) return inflight;
    const fresh = loaded && opts.now() - loaded.fetchedAt < opts.maxAgeMs;
    if (fresh) return loaded!;
    if (lastFailure && opts.now() - lastAttemptAt < failureBackoffMs) {
      if (loaded) return loaded;
      throw lastFailure;
    }
    try {
      return await refresh();
    } catch (err) {
      // Stale keys still verify while the issuer is away: only with none at all are requests refused (503).
      if (loaded) return loaded;
      throw err;
    }
  }

  async function keyFor(header: JWSHeaderParameters): Promise<CryptoKey> {
    const set = await current();
    try {
      return await set.keys(header);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
    }
    // An unknown kid: wait for a fetch already under way, else fetch when the cooldown allows.
    let next: Loaded | undefined;
    if (inflight) next = await inflight;
    else if (opts.now() - set.fetchedAt >= opts.cooldownMs && opts.now() - lastAttemptAt >= opts.cooldownMs) {
      next = await refresh();
    }
    if (next && next !== set) {
      try {
        return await next.keys(header);
      } catch (err) {
        if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
      }
    }
    const kid = typeof header.kid === 'string' ? ` "${header.kid.slice(0, 64)}"` : '';
    throw invalidToken('unknown_key', `The access token is signed with a key${kid} the identity provider does not publish.`);
  }

  return {
    keyFor,
    async warm() {
      try {
        await current();
        return true;
      } catch {
        return false;
      }
    },
    get fetches() {
      return fetches;
    },
    isFresh: () => loaded !== undefined && opts.now() - loaded.fetchedAt < opts.maxAgeMs,
    get version() {
      return version;
    },
  };
}
