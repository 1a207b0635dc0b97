import { createRoute, z } from '@hono/zod-openapi';
import type { Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { DASHBOARD_PAGE_HEADERS, MAX_PAGE_BYTES, pageDigest } from '@svc/platform/dashboard-pages';
import { refuseCards } from '@svc/platform/dashboard-cards';
import { verifyDashboard, type DashboardKeys } from '@svc/platform/dashboard-signature';
import { conflict, forbidden, notFound, unauthorized, unavailable } from '@svc/platform/errors';
import type { CallerResolver } from '@svc/platform/auth';
import { createApp, HEADER_CALLERS, type AppEnv } from '@svc/platform/http';
import type { LaunchDecision } from '@svc/platform/launch-contract';
import { identityHeaders, type Caller } from '@svc/platform/identity';
import type { Logger } from '@svc/platform/log';
import { apiRoutes, CALLER_SECURITY, documentRoutes, problems, storableText } from '@svc/platform/openapi';
import type { ServiceMetrics } from '@svc/platform/metrics';
import type { PolicyEngine } from '@svc/platform/policy';
import { readObject, type ObjectStore } from '@svc/platform/objects';
import { homeRoutes } from './home.ts';
import { PoolFullError, type SandboxPool } from './pool.ts';
import { SESSION_COOKIE, viewerOf, type Sessions } from './viewer.ts';

export type RuntimeDeps = {
  pool: SandboxPool;
  sessions: Sessions;
  keys: DashboardKeys;
  /** The page store explore writes to (SVC_DASHBOARDS_STORE), read-only here. */
  pages: ObjectStore;
  exploreUrl: string;
  fetch: typeof fetch;
  logger: Logger;
  metrics: ServiceMetrics;
  ready: () => Promise<boolean>;
  /** The runtime's policy engine, for /ready and /metrics only: its access decisions are explore's. */
  policy?: PolicyEngine;
  /** Who views (SVC_AUTH_MODE); the ingress's headers when absent. */
  callers?: CallerResolver;
};

const SESSION_SCHEME = {
  type: 'apiKey',
  in: 'cookie',
  name: SESSION_COOKIE,
  description: 'The session the runtime issues (HS256, 8 h) the first time a viewer comes through the ingress',
} as const;

const open = createRoute({
  method: 'get',
  path: '/d/{id}',
  summary: "A dashboard's page, served from the viewer's own sandbox once explore's launch decision allows it",
  request: { params: z.object({ id: storableText().min(1).max(100).openapi({ example: 'd-0000-example' }) }) },
  security: [...CALLER_SECURITY, { session: [] }],
  responses: {
    200: { description: 'The page, as the sandbox serves it', content: { 'text/html': { schema: z.string() } } },
    ...problems(400, 401, 403, 404, 409, 503),
  },
});

const RUNTIME_DOCUMENT = {
  title: 'svc dashboards runtime',
  version: '1',
  description: 'Opens published dashboards, each in a sandbox of its viewer, after explore decides the viewer may.',
};

/** Explore's launch decision when it allows (the contract both sides import from @svc/platform/launch-contract). */
type Launch = Extract<LaunchDecision, { allow: true }>;

/**
 * GET /d/{id}: who is viewing; explore's launch decision for that viewer (the policy's, with where the page is and
 * its digest); the page from the store, checked against that digest and its signature (which names the dashboard
 * and its owner); then the viewer's own sandbox.
 */
export function createRuntimeApp(deps: RuntimeDeps): Hono<AppEnv> {
  const callers = deps.callers ?? HEADER_CALLERS;
  const app = createApp({
    service: 'dashboards-runtime',
    logger: deps.logger,
    metrics: deps.metrics,
    ready: deps.ready,
    callers,
    ...(deps.policy ? { policy: deps.policy } : {}),
  });
  const routes = apiRoutes().openapi(open, async (c) => {
    const found = await viewerOf(callers, c.req.raw.headers, getCookie(c, SESSION_COOKIE), deps.sessions);
    if (!found) throw unauthorized('No viewer identity: open dashboards through the ingress, which signs you in.');
    const { viewer } = found;
    if (found.fromHeaders) setCookie(c, SESSION_COOKIE, await deps.sessions.issue(viewer), { httpOnly: true, sameSite: 'Lax', path: '/' });

    const { id } = c.req.valid('param');
    const launch = await launchDecision(deps, viewer, id);
    const page = await readObject(deps.pages, launch.object_key, MAX_PAGE_BYTES).catch((err: unknown) => {
      throw unavailable(`The page of dashboard '${id}' could not be read from ${deps.pages.describe()}: ${(err as Error).message}`);
    });
    if (!page) throw notFound(`Dashboard '${id}' has no page in the store.`);
    const refusal =
      pageDigest(page) !== launch.digest ? 'the page is not the one explore published' : checkSignature(deps.keys, page, id, launch.owner);
    if (refusal) {
      c.var.log.warn({ dashboard: id, reason: refusal }, 'dashboard refused at launch');
      throw forbidden(`Dashboard '${id}' was refused: ${refusal}.`);
    }
    const res = await deps.pool
      .withSandbox({ user: viewer.user, dashboardId: id, page, digest: launch.digest }, (sandbox) => deps.fetch(sandbox.url))
      .catch((err: unknown) => {
        if (err instanceof PoolFullError) throw unavailable(err.message, { 'Retry-After': String(err.retryAfterSeconds) });
        throw err;
      });
    for (const [name, value] of res.headers)
      if (!/^(content-length|transfer-encoding|connection|keep-alive)$/i.test(name)) c.header(name, value);
    // The runtime sets the page's policy itself, over whatever the sandbox said: the sandbox only serves bytes.
    for (const [name, value] of Object.entries(DASHBOARD_PAGE_HEADERS)) c.header(name, value);
    return c.body(await res.arrayBuffer(), res.status as 200);
  });
  // The home page and its stylesheet: pages for people, outside the API description.
  app.route('/', homeRoutes({ exploreUrl: deps.exploreUrl, fetch: deps.fetch, sessions: deps.sessions, callers }));
  app.route(
    '/',
    documentRoutes(routes, RUNTIME_DOCUMENT, (registry) => registry.registerComponent('securitySchemes', 'session', SESSION_SCHEME)),
  );
  app.route('/', routes);
  return app;
}

/** Explore decides for this viewer; anything but an explicit allow is a refusal, and an unreachable explore denies. */
async function launchDecision(deps: RuntimeDeps, viewer: Caller, id: string): Promise<Launch> {
  let res: Response;
  try {
    res = await deps.fetch(`${deps.exploreUrl.replace(/\/$/, '')}/dashboards/${encodeURIComponent(id)}/launch`, {
      headers: identityHeaders(viewer),
      // explore waits up to SVC_DASHBOARD_PAGE_WAIT_MS (20 s) for a page still being drawn after publish before it answers
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw unavailable(`The access check could not be made: ${(err as Error).message}`);
  }
  if (res.status === 404) throw notFound(`Dashboard '${id}' does not exist.`);
  // a page that could not be drawn (409), or is still being drawn (503): explore's own words, for the viewer
  if (res.status === 409) throw conflict(await problemDetail(res, `The page of dashboard '${id}' could not be drawn.`));
  if (res.status === 503 && res.headers.has('retry-after'))
    throw unavailable(await problemDetail(res, `The page of dashboard '${id}' is not ready yet.`), {
      'Retry-After': res.headers.get('retry-after')!,
    });
  if (!res.ok) throw unavailable(`The access check could not be made: explore answered ${res.status}.`);
  const decision = (await res.json().catch(() => ({}))) as Partial<Launch> & { allow?: unknown; reason?: unknown };
  if (decision.allow !== true) throw forbidden(`You may not open dashboard '${id}': ${String(decision.reason ?? 'no reason given')}.`);
  if (typeof decision.object_key !== 'string' || typeof decision.digest !== 'string' || typeof decision.owner !== 'string') {
    throw unavailable(`Explore's launch answer for '${id}' is incomplete.`);
  }
  return decision as Launch;
}

/** The detail of explore's problem answer, or `fallback` when it has none. */
async function problemDetail(res: Response, fallback: string): Promise<string> {
  const body = (await res.json().catch(() => ({}))) as { detail?: unknown };
  return typeof body.detail === 'string' && body.detail ? body.detail : fallback;
}

/** The page's signature for this id and owner; for a dashboard of cards, each card's own too. */
function checkSignature(keys: DashboardKeys, page: Buffer, id: string, owner: string): string | undefined {
  const verified = verifyDashboard(page.toString('utf8'), keys, { id, owner });
  return verified.ok ? refuseCards(verified.body, keys, owner) : verified.reason;
}
