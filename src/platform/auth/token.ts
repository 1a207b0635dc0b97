// Where a request carries its token, in order: `Authorization: Bearer …` (RFC 6750), else `X-User-Token` (the
// header explore's specification names for the caller's OAuth token), else the forward-auth proxy's header
// (oauth2-proxy's X-Auth-Request-Access-Token unless configured otherwise). Another scheme in Authorization (Basic)
// is no token and the next source is looked at.

type Headers = { get(name: string): string | null | undefined };

export type TokenSource = 'authorization' | 'x-user-token' | 'proxy-header';
export type FoundToken = { token: string; source: TokenSource };

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

export function tokenFrom(headers: Headers, proxyHeader: string): FoundToken | undefined {
  const bearer = BEARER.exec(headers.get('authorization') ?? '')?.[1];
  if (bearer) return { token: bearer, source: 'authorization' };
  const userToken = (headers.get('x-user-token') ?? '').trim();
  if (userToken) return { token: userToken, source: 'x-user-token' };
  const proxied = (headers.get(proxyHeader) ?? '').trim();
  if (proxied) return { token: proxied, source: 'proxy-header' };
  return undefined;
}
