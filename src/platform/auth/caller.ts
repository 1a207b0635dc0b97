import { callerFrom, type Caller } from '../identity.ts';
import type { AuthSettings } from './settings.ts';
import { createTokenVerifier, type TokenVerifierOptions } from './verifier.ts';

type Headers = { get(name: string): string | null | undefined };

export type CallerResolver = {
  mode: AuthSettings['mode'];
  /** The caller of a request; throws AuthError (jwt mode) or the 401 ProblemError of identity.ts (headers mode). */
  callerFrom(headers: Headers): Promise<Caller>;
  /** Start-up: fetch the issuer's keys early. False means unreachable (log it and start anyway). */
  warm(): Promise<boolean>;
};

/** One resolver per service, chosen by SVC_AUTH_MODE. */
export function createCallerResolver(
  settings: AuthSettings,
  deps: Omit<TokenVerifierOptions, 'settings'>,
): CallerResolver {
  if (settings.mode === 'headers') {
    return { mode: 'headers', callerFrom: async (headers) => callerFrom(headers), warm: async () => true };
  }
  const verifier = createTokenVerifier({ ...deps, settings });
  return { mode: 'jwt', callerFrom: (headers) => verifier.callerFrom(headers), warm: () => verifier.warm() };
}
