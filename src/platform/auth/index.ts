// Identity from verified tokens (SVC_AUTH_MODE=jwt) or from the ingress's headers (headers). See docs/auth.md.
export { authSettings, authShape, type AuthConfig, type AuthSettings, type OidcSettings } from './settings.ts';
export { AuthError, type AuthFailure, type InvalidTokenReason } from './errors.ts';
export { authProblem, authProblemResponse, type AuthProblem } from './problem.ts';
export { tokenFrom, type FoundToken, type TokenSource } from './token.ts';
export { callerFromClaims, claimAt } from './claims.ts';
export { createIssuerKeys, type Fetch, type IssuerKeys } from './keys.ts';
export { ALGORITHMS, createTokenVerifier, type TokenVerifier, type TokenVerifierOptions } from './verifier.ts';
export { createCallerResolver, type CallerResolver } from './caller.ts';
