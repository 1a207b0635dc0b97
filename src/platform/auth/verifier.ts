import { errors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import type { Caller } from '../identity.ts';
import { callerFromClaims } from './claims.ts';
import { AuthError, invalidToken, noToken } from './errors.ts';
import { createIssuerKeys, type Fetch, type IssuerKeys } from './keys.ts';
import type { OidcSettings } from './settings.ts';
import { createTokenCache } from './token-cache.ts';
import { tokenFrom } from './token.ts';

// Verifies an access token against the issuer's published keys and turns its claims into the caller.
// Asymmetric algorithms only: `none` and HS* (whose "key" could be the public key itself) never verify.
export const ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;

type Headers = { get(name: string): string | null | undefined };

export type TokenVerifier = {
  /** The caller a token names; throws AuthError. */
  verify(token: string): Promise<Caller>;
  /** The caller from a request's headers: only the token counts, never X-User-Id, X-User-Role and the like. */
  callerFrom(headers: Headers): Promise<Caller>;
  /** Fetches the keys ahead of the first request; false (to be logged) when the issuer cannot be reached. */
  warm(): Promise<boolean>;
  readonly keys: IssuerKeys;
};

export type TokenVerifierOptions = {
  settings: OidcSettings;
  /** The roles the platform knows now (policies/data.json `known_roles`); any other role in a token is dropped. */
  knownRoles: () => readonly string[];
  fetch?: Fetch;
  /** Milliseconds since the epoch. */
  now?: () => number;
};

export function createTokenVerifier(opts: TokenVerifierOptions): TokenVerifier {
  const { settings, knownRoles } = opts;
  const now = opts.now ?? Date.now;
  const keys = createIssuerKeys({
    issuer: settings.issuer,
    fetch: opts.fetch ?? ((url, init) => fetch(url, init)),
    now,
    cooldownMs: settings.jwksCooldownMs,
    maxAgeMs: settings.jwksMaxAgeMs,
  });
  const baseOptions: JWTVerifyOptions = {
    algorithms: [...ALGORITHMS],
    issuer: settings.issuer,
    audience: settings.audience,
    clockTolerance: settings.clockSkewSeconds,
    requiredClaims: ['exp'],
  };

  async function verifyClaims(token: string): Promise<JWTPayload> {
    const options = { ...baseOptions, currentDate: new Date(now()) };
    try {
      return (await jwtVerify(token, keys.keyFor, options)).payload;
    } catch (err) {
      // A token without a kid and several keys that fit: try each (jose leaves this to the caller).
      if (err instanceof errors.JWKSMultipleMatchingKeys) {
        for await (const key of err) {
          try {
            return (await jwtVerify(token, key, options)).payload;
          } catch (inner) {
            if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw translate(inner, settings);
          }
        }
        throw invalidToken('bad_signature', 'The access token signature does not verify.');
      }
      throw translate(err, settings);
    }
  }

  const cache = createTokenCache(settings.tokenCacheSize, settings.clockSkewSeconds);

  async function verify(token: string): Promise<Caller> {
    const keysVersion = keys.version;
    const known = knownRoles();
    // A stale key set is refetched by a full verification first: a key the issuer withdrew stops working.
    const cached = keys.isFresh() ? cache.get(token, now() / 1000, keysVersion, known) : undefined;
    if (cached) return cached;
    const claims = await verifyClaims(token);
    const caller = callerFromClaims(claims, token, settings, known);
    // exp is required, so it is a number here; the version is the one the signature was checked against.
    if (keys.version === keysVersion) cache.set(token, { caller, exp: claims.exp!, nbf: claims.nbf, keysVersion, knownRoles: known });
    return caller;
  }

  return {
    verify,
    async callerFrom(headers) {
      const found = tokenFrom(headers, settings.tokenHeader);
      if (!found) {
        throw noToken(`No access token: send "Authorization: Bearer <token>" from ${settings.issuer}, or sign in through the ingress.`);
      }
      return verify(found.token);
    },
    warm: () => keys.warm(),
    keys,
  };
}

/** jose's errors as the platform's; anything unexpected stays a bad token (401), never a 500. */
function translate(err: unknown, settings: OidcSettings): AuthError {
  if (err instanceof AuthError) return err;
  if (err instanceof errors.JWTExpired) {
    return invalidToken('expired', `The access token expired${at(err.payload.exp)}; get a new one from ${settings.issuer}.`, err);
  }
  if (err instanceof errors.JWTClaimValidationFailed) {
    switch (err.claim) {
      case 'nbf':
        return invalidToken('not_yet_valid', `The access token is not valid before${at(err.payload.nbf)}.`, err);
      case 'iss':
        return invalidToken('wrong_issuer', `The access token was not issued by ${settings.issuer}.`, err);
      case 'aud':
        return invalidToken('wrong_audience', `The access token is not meant for "${settings.audience}" (its "aud" claim).`, err);
      case 'exp':
        return invalidToken('malformed', 'The access token has no usable "exp" claim; tokens that never expire are refused.', err);
      default:
        return invalidToken('malformed', `The access token's "${err.claim}" claim is invalid.`, err);
    }
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) {
    return invalidToken('algorithm', `The access token's signing algorithm is not accepted (only ${ALGORITHMS.join(', ')}).`, err);
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) {
    return invalidToken('bad_signature', 'The access token signature does not verify.', err);
  }
  if (err instanceof errors.JWKSNoMatchingKey) {
    return invalidToken('unknown_key', 'The access token is signed with a key the identity provider does not publish.', err);
  }
  return invalidToken('malformed', 'The access token is not a well-formed signed JWT.', err);
}

const at = (seconds: unknown) => (typeof seconds === 'number' ? ` at ${new Date(seconds * 1000).toISOString()}` : '');
