import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { verifyDashboard } from '../src/platform/dashboard-signature.ts';
import { forbidden, notFound, unauthorized, unavailable } from '../src/platform/errors.ts';
import { createApp, type AppEnv } from '../src/platform/http.ts';
import type { Caller } from '../src/platform/identity.ts';
import type { Logger } from '../src/platform/log.ts';
import type { PolicyEngine } from '../src/platform/policy/index.ts';
import type { ServiceMetrics } from '../src/platform/metrics.ts';
import type { Discovery } from './discovery.ts';
import type { SandboxPool } from './pool.ts';
import { SESSION_COOKIE, viewerOf, type Sessions } from './viewer.ts';

export type RuntimeDeps = {
  discovery: Discovery;
  pool: SandboxPool;
  sessions: Sessions;
  keys: { current: string; old?: string | undefined };
  exploreUrl: string;
  fetch: typeof fetch;
  logger: Logger;
  metrics: ServiceMetrics;
  ready: () => Promise<boolean>;
  /** The runtime's policy engine, for /ready and /metrics only: its access decisions are explore's. */
  policy?: PolicyEngine;
};

/** GET /d/{id}: who is viewing, may they (explore's access decision), is the page intact; then their own sandbox. */
export function createRuntimeApp(deps: RuntimeDeps): Hono<AppEnv> {
  const app = createApp({ service: 'dashboards-runtime', logger: deps.logger, metrics: deps.metrics, ready: deps.ready, ...(deps.policy ? { policy: deps.policy } : {}) });
  app.get('/d/:id', async (c) => {
    const found = await viewerOf(c.req.raw.headers, getCookie(c, SESSION_COOKIE), deps.sessions);
    if (!found) throw unauthorized('No viewer identity: open dashboards through the ingress, which signs you in.');
    const { viewer } = found;
    if (found.fromHeaders) setCookie(c, SESSION_COOKIE, await deps.sessions.issue(viewer), { httpOnly: true, sameSite: 'Lax', path: '/' });

    const id = c.req.param('id');
    const dashboard = await deps.discovery.find(id);
    if (!dashboard) throw notFound(`Dashboard '${id}' does not exist.`);
    if (dashboard.owner !== viewer.user) await requireAccess(deps, viewer, id);

    const page = await readFile(dashboard.file, 'utf8').catch(() => undefined);
    if (page === undefined) throw notFound(`Dashboard '${id}' has no page file.`);
    const verified = verifyDashboard(page, deps.keys);
    if (!verified.ok) {
      c.var.log.warn({ dashboard: id, reason: verified.reason }, 'dashboard refused at launch');
      throw forbidden(`Dashboard '${id}' was refused: ${verified.reason}.`);
    }
    const digest = createHash('sha256').update(page).digest('hex');
    const sandbox = await deps.pool.sandboxFor({ user: viewer.user, dashboardId: id, file: dashboard.file, digest });
    const res = await deps.fetch(sandbox.url);
    for (const [name, value] of res.headers) if (!/^(content-length|transfer-encoding|connection|keep-alive)$/i.test(name)) c.header(name, value);
    return c.body(await res.arrayBuffer(), res.status as 200);
  });
  return app;
}

/** For anyone but the owner, explore decides; anything but an explicit allow is a refusal. */
async function requireAccess(deps: RuntimeDeps, viewer: Caller, id: string): Promise<void> {
  let decision: { allow?: unknown; reason?: unknown } = {};
  try {
    const res = await deps.fetch(`${deps.exploreUrl.replace(/\/$/, '')}/dashboards/${encodeURIComponent(id)}/access`, {
      headers: { 'X-User-Id': viewer.user, 'X-User-Role': viewer.roles.join(','), 'X-User-Groups': viewer.groups.join(',') },
      signal: AbortSignal.timeout(5000),
    });
    decision = res.ok ? ((await res.json()) as typeof decision) : { allow: false, reason: `explore answered ${res.status}` };
  } catch (err) {
    throw unavailable(`The access check could not be made: ${(err as Error).message}`);
  }
  if (decision.allow !== true) throw forbidden(`You may not open dashboard '${id}': ${String(decision.reason ?? 'no reason given')}.`);
}
