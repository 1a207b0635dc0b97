import { callerFrom, type Caller } from '../identity.ts';
import type { AuthSettings } from './settings.ts';
import { tokenFrom } from './token.ts';
import { createTokenVerifier, type TokenVerifierOptions } from './verifier.ts';

type Headers = { get(name: string): string | null | undefined };

export type CallerResolver = {
  mode: AuthSettings['mode'];
  /** The caller of a request; throws AuthError (jwt mode) or the 401 ProblemError of identity.ts (headers mode). */
  callerFrom(headers: Headers): Promise<Caller>;
  /**
   * For a service that also serves calls without identity (the tracker inside the cluster): no credentials at all is
   * `undefined`; credentials that are there are checked exactly as by callerFrom, so a bad token is still refused.
   */
  optionalCallerFrom(headers: Headers): Promise<Caller | undefined>;
  /** Start-up: fetch the issuer's keys early. False means unreachable (log it and start anyway). */
  warm(): Promise<boolean>;
};

/** One resolver per service, chosen by SVC_AUTH_MODE. */
export function createCallerResolver(settings: AuthSettings, deps: Omit<TokenVerifierOptions, 'settings'>): CallerResolver {
  if (settings.mode === 'headers') {
    const named = (headers: Headers) => Boolean((headers.get('x-query-user') ?? '').trim() || (headers.get('x-user-id') ?? '').trim());
    return {
      mode: 'headers',
      callerFrom: async (headers) => callerFrom(headers),
      optionalCallerFrom: async (headers) => (named(headers) ? callerFrom(headers) : undefined),
      warm: async () => true,
    };
  }
  const verifier = createTokenVerifier({ ...deps, settings });
  return {
    mode: 'jwt',
    callerFrom: (headers) => verifier.callerFrom(headers),
    optionalCallerFrom: async (headers) => {
      // an Authorization header that holds no usable bearer token throws here, exactly as in callerFrom
      const found = tokenFrom(headers, settings.tokenHeader);
      return found ? verifier.verify(found.token) : undefined;
    },
    warm: () => verifier.warm(),
  };
}
