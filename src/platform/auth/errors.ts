// What can go wrong when a caller is taken from a token. Every service maps these the same way (see problem.ts):
// no token or a token that fails any check is 401, an issuer that cannot be reached while keys are needed is 503.

export type InvalidTokenReason =
  /** An Authorization header that is empty or names another scheme than Bearer (Basic, Digest…). */
  | 'not_bearer'
  | 'malformed'
  | 'algorithm'
  | 'unknown_key'
  | 'bad_signature'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'expired'
  | 'not_yet_valid'
  | 'no_user_claim';

export type AuthFailure = { kind: 'no_token' } | { kind: 'invalid_token'; reason: InvalidTokenReason } | { kind: 'issuer_unavailable' };

export class AuthError extends Error {
  constructor(
    readonly failure: AuthFailure,
    /** Says what to do; safe to show the caller (never the token). */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.name = 'AuthError';
  }
}

export const noToken = (detail: string) => new AuthError({ kind: 'no_token' }, detail);
export const invalidToken = (reason: InvalidTokenReason, detail: string, cause?: unknown) =>
  new AuthError({ kind: 'invalid_token', reason }, detail, { cause });
export const issuerUnavailable = (detail: string, cause?: unknown) => new AuthError({ kind: 'issuer_unavailable' }, detail, { cause });
