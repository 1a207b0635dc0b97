import { z } from 'zod';
import { ConfigError, int, optionalStr, str, url } from '../config.ts';

// The identity settings every service shares, as a shape the config loader spreads into its own
// (`{ ...platformShape, ...authShape }`): each resolves from SVC_<NAME>, else <NAME>. docs/auth.md describes them.
export const authShape = {
  /** `headers`: trust the ingress's X-User-* headers (today's behaviour, `svc dev`). `jwt`: only a verified token. */
  AUTH_MODE: z.enum(['headers', 'jwt']).default('headers'),
  /** Where the token sits when neither `Authorization: Bearer` nor `X-User-Token` carries it (oauth2-proxy's name). */
  AUTH_TOKEN_HEADER: str('X-Auth-Request-Access-Token'),
  /** The issuer's URL exactly as tokens carry it in `iss`; discovery is `<issuer>/.well-known/openid-configuration`. */
  OIDC_ISSUER: url(),
  /** Must be one of the token's `aud` values (Keycloak: an audience mapper adds the client `svc`). */
  OIDC_AUDIENCE: optionalStr(),
  OIDC_CLOCK_SKEW_SECONDS: int(30),
  OIDC_USER_CLAIM: str('preferred_username'),
  /** A dot path into the token (`realm_access.roles`); a claim whose own name has dots is found as it is first. */
  OIDC_ROLES_CLAIM: str('realm_access.roles'),
  OIDC_GROUPS_CLAIM: str('groups'),
  /** An unknown `kid` refetches the issuer's key set at most once per this many seconds. */
  OIDC_JWKS_COOLDOWN_SECONDS: int(30, 1),
  /** Keys older than this are refetched before use (a removed key stops being accepted). */
  OIDC_JWKS_MAX_AGE_SECONDS: int(600, 1),
  /** Tokens remembered after their signature verified, so the next request with the same token skips the crypto. */
  OIDC_TOKEN_CACHE_SIZE: int(10_000),
};

export type AuthConfig = z.infer<z.ZodObject<typeof authShape>>;

export type OidcSettings = {
  issuer: string;
  audience: string;
  clockSkewSeconds: number;
  userClaim: string;
  rolesClaim: string;
  groupsClaim: string;
  tokenHeader: string;
  jwksCooldownMs: number;
  jwksMaxAgeMs: number;
  tokenCacheSize: number;
};

export type AuthSettings = { mode: 'headers'; tokenHeader: string } | ({ mode: 'jwt' } & OidcSettings);

/** The parsed configuration as the verifier takes it. `jwt` mode without an issuer or an audience stops start-up. */
export function authSettings(config: AuthConfig): AuthSettings {
  if (config.AUTH_MODE === 'headers') return { mode: 'headers', tokenHeader: config.AUTH_TOKEN_HEADER };
  const missing = [config.OIDC_ISSUER ? undefined : 'SVC_OIDC_ISSUER', config.OIDC_AUDIENCE ? undefined : 'SVC_OIDC_AUDIENCE'].filter(
    Boolean,
  );
  if (missing.length > 0) {
    throw new ConfigError(`invalid configuration: SVC_AUTH_MODE=jwt needs ${missing.join(' and ')}`);
  }
  return {
    mode: 'jwt',
    issuer: config.OIDC_ISSUER!,
    audience: config.OIDC_AUDIENCE!,
    clockSkewSeconds: config.OIDC_CLOCK_SKEW_SECONDS,
    userClaim: config.OIDC_USER_CLAIM,
    rolesClaim: config.OIDC_ROLES_CLAIM,
    groupsClaim: config.OIDC_GROUPS_CLAIM,
    tokenHeader: config.AUTH_TOKEN_HEADER,
    jwksCooldownMs: config.OIDC_JWKS_COOLDOWN_SECONDS * 1000,
    jwksMaxAgeMs: config.OIDC_JWKS_MAX_AGE_SECONDS * 1000,
    tokenCacheSize: config.OIDC_TOKEN_CACHE_SIZE,
  };
}
