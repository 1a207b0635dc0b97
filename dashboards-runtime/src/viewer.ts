import { createHash } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { CallerResolver } from '@svc/platform/auth';
import type { Caller } from '@svc/platform/identity';

// The viewer comes from the forward-auth headers; the runtime then issues a session cookie so that a browser's
// later requests (without the ingress in front, or from the sandboxed page) keep the same identity. In jwt mode
// every request carries the viewer's token (the ingress adds it) and there is no cookie session: the token is what
// explore's launch decision verifies, and a cookie could not carry it.
export const SESSION_COOKIE = 'svc_dashboard_session';

export function createSessions(secret: string) {
  const key = createHash('sha256').update(`dashboard-session:${secret}`).digest();
  return {
    async issue(viewer: Caller): Promise<string> {
      return new SignJWT({ roles: viewer.roles, groups: viewer.groups })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(viewer.user)
        .setIssuedAt()
        .setExpirationTime('8h')
        .sign(key);
    },
    async read(token: string): Promise<Caller | undefined> {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'] });
        if (!payload.sub) return undefined;
        return { user: payload.sub, roles: (payload.roles as string[]) ?? [], groups: (payload.groups as string[]) ?? [] };
      } catch {
        return undefined;
      }
    },
  };
}
export type Sessions = ReturnType<typeof createSessions>;

/**
 * Headers first (the ingress is the authority), else a valid session cookie, else nobody. In jwt mode only a
 * verified token: none, or a bad one, is the 401 with its challenge.
 */
export async function viewerOf(
  callers: CallerResolver,
  headers: Headers,
  cookie: string | undefined,
  sessions: Sessions,
): Promise<{ viewer: Caller; fromHeaders: boolean } | undefined> {
  if (callers.mode === 'jwt') return { viewer: await callers.callerFrom(headers), fromHeaders: false };
  try {
    return { viewer: await callers.callerFrom(headers), fromHeaders: true };
  } catch {
    const viewer = cookie ? await sessions.read(cookie) : undefined;
    return viewer ? { viewer, fromHeaders: false } : undefined;
  }
}
