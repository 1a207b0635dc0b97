import { Hono } from 'hono';
import { committedKnownRoles } from '../callers.ts';
import type { AppEnv } from '../http.ts';

// What a console's header needs to say who is calling, before any call that needs an identity: under `svc dev` the
// roles to pick from (the policy's own data, so a bundle that adds a role shows it at once), and in every mode who the
// request's identity is (behind an ingress, the one it set), which the header shows.

export type SignInOptions = {
  /** `svc dev` (and apps built by tests): the page has a sign-in box, and GET /ui/roles lists what it offers. */
  devIdentity: boolean;
  /** The roles the policy deciding now knows (PolicyEngine.knownRoles); undefined where it cannot tell. */
  knownRoles?: (() => readonly string[] | undefined) | undefined;
};

/** GET /ui/roles (svc dev only) and GET /ui/me: plain JSON for the page, outside the API and its OpenAPI document. */
export function signInRoutes(opts: SignInOptions): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  if (opts.devIdentity) {
    // an engine that cannot tell (the OPA sidecar) falls back to the committed build's data, as token roles do
    routes.get('/ui/roles', (c) => c.json({ roles: [...(opts.knownRoles?.() ?? committedKnownRoles())] }));
  }
  routes.get('/ui/me', async (c) => {
    const caller = await c.var.callers.optionalCallerFrom(c.req.raw.headers);
    return c.json(caller ? { user: caller.user, roles: caller.roles, groups: caller.groups } : { user: null, roles: [], groups: [] });
  });
  return routes;
}
