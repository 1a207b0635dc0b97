import { invalidToken } from './errors.ts';

// Where a request carries its token, in order: `Authorization: Bearer …` (RFC 6750), else `X-User-Token` (the
// header explore's specification names for the caller's OAuth token), else the forward-auth proxy's header
// (oauth2-proxy's X-Auth-Request-Access-Token unless configured otherwise). An Authorization header that is there is
// the caller's own claim to credentials: unless it is one well-formed bearer token (empty, Basic, another scheme, a
// Bearer with no token or a malformed one) it is refused, never passed over for a weaker source. An empty
// X-User-Token or proxy header is no token: an ingress that copies a header it has no value for leaves it empty.

type Headers = { get(name: string): string | null | undefined };

export type TokenSource = 'authorization' | 'x-user-token' | 'proxy-header';
export type FoundToken = { token: string; source: TokenSource };

/** RFC 6750 §2.1 b64token: one word of these characters, `=` only at the end. JWTs and opaque tokens alike. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
/** A scheme name safe to repeat in a message (RFC 9110 token characters, bounded). */
const SCHEME_NAME = /^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,31}$/;
const USAGE = 'send "Authorization: Bearer <access token>"';

/** Throws AuthError (invalid_token) for an Authorization header that is there but holds no usable bearer token. */
export function tokenFrom(headers: Headers, proxyHeader: string): FoundToken | undefined {
  const authorization = headers.get('authorization');
  if (authorization !== null && authorization !== undefined) return { token: bearerToken(authorization), source: 'authorization' };
  const userToken = (headers.get('x-user-token') ?? '').trim();
  if (userToken) return { token: userToken, source: 'x-user-token' };
  const proxied = (headers.get(proxyHeader) ?? '').trim();
  if (proxied) return { token: proxied, source: 'proxy-header' };
  return undefined;
}

function bearerToken(value: string): string {
  const [scheme = '', ...words] = value.trim().split(/[ \t]+/);
  if (scheme === '') throw invalidToken('not_bearer', `The Authorization header is empty: ${USAGE}, or leave the header out.`);
  if (scheme.toLowerCase() !== 'bearer') {
    const named = SCHEME_NAME.test(scheme) ? `the "${scheme}" scheme` : 'a scheme svc does not know';
    throw invalidToken('not_bearer', `The Authorization header uses ${named}; svc accepts only a bearer token: ${USAGE}.`);
  }
  if (words.length === 0) throw invalidToken('malformed', `The Authorization header says "Bearer" but carries no token: ${USAGE}.`);
  if (words.length > 1) {
    throw invalidToken('malformed', `The Authorization header carries more than one word after "Bearer": ${USAGE}, the token alone.`);
  }
  if (!B64TOKEN.test(words[0]!)) {
    throw invalidToken(
      'malformed',
      'The bearer token in the Authorization header holds characters a token cannot have (RFC 6750: letters, digits, - . _ ~ + / and trailing =).',
    );
  }
  return words[0]!;
}
