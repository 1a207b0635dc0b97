import type { Context, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Caller } from '../platform/identity.ts';
import type { AppEnv } from '../platform/http.ts';

// The tracker serves two kinds of call (its specification): through the ingress, signed in, and straight from
// inside the cluster, with no identity at all. In jwt mode a token is verified whenever one is sent (a forged or
// expired one is a 401 the MLflow client shows) and names the user recorded on runs and model versions; a call with
// none goes on as before. In headers mode nothing changes: the user is whatever the client sends.

export const signIn: MiddlewareHandler<AppEnv> = createMiddleware<AppEnv>(async (c, next) => {
  if (c.var.callers.mode === 'jwt') {
    const caller = await c.var.callers.optionalCallerFrom(c.req.raw.headers);
    if (caller) c.set('caller', caller);
  }
  await next();
});

/** The user a verified token names; undefined for a call without one. */
export const signedInUser = (c: Context<AppEnv>): string | undefined => (c.get('caller') as Caller | undefined)?.user;
