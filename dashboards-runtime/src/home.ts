import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { CallerResolver } from '@svc/platform/auth';
import { unauthorized, unavailable } from '@svc/platform/errors';
import type { AppEnv } from '@svc/platform/http';
import { identityHeaders, type Caller } from '@svc/platform/identity';
import { BASE_CSS, escapeHtml, PAGE_CSP } from '@svc/platform/web/pages';
import { SESSION_COOKIE, viewerOf, type Sessions } from './viewer.ts';

// GET /: the dashboards the viewer may open, as explore's GET /dashboards?scope=all answers for that viewer (the
// dashboards policy's view decision on each; the runtime filters nothing itself). A page rendered here with no
// script, under the consoles' strict CSP, its one stylesheet the shared one. Who views, and what an unreachable
// explore means (503), are as for GET /d/{id}.
type Listed = { id: string; title: string; owner: string; created_at: string; visibility: string; cards: number };

const PAGE_HEADERS = { 'Content-Security-Policy': PAGE_CSP, 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' };
const BASE = readFileSync(BASE_CSS, 'utf8');

export function homeRoutes(deps: { exploreUrl: string; fetch: typeof fetch; sessions: Sessions; callers: CallerResolver }) {
  return new Hono<AppEnv>()
    .get('/', async (c) => {
      const found = await viewerOf(deps.callers, c.req.raw.headers, getCookie(c, SESSION_COOKIE), deps.sessions);
      if (!found) throw unauthorized('No viewer identity: open dashboards through the ingress, which signs you in.');
      if (found.fromHeaders)
        setCookie(c, SESSION_COOKIE, await deps.sessions.issue(found.viewer), { httpOnly: true, sameSite: 'Lax', path: '/' });
      const dashboards = await visibleTo(deps, found.viewer);
      return c.html(homePage(found.viewer, dashboards), 200, PAGE_HEADERS);
    })
    .get('/ui/*', (c) =>
      c.req.path === '/ui/base.css'
        ? c.body(BASE, 200, { ...PAGE_HEADERS, 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'no-cache' })
        : c.notFound(),
    );
}

async function visibleTo(deps: { exploreUrl: string; fetch: typeof fetch }, viewer: Caller): Promise<Listed[]> {
  let res: Response;
  try {
    res = await deps.fetch(`${deps.exploreUrl.replace(/\/$/, '')}/dashboards?scope=all`, {
      headers: identityHeaders(viewer),
      signal: AbortSignal.timeout(5000),
    });
  } catch (err) {
    throw unavailable(`The list of dashboards could not be fetched: ${(err as Error).message}`);
  }
  if (res.status === 401) throw unauthorized('Explore does not accept this viewer: sign in again through the ingress.');
  if (!res.ok) throw unavailable(`The list of dashboards could not be fetched: explore answered ${res.status}.`);
  const body = (await res.json().catch(() => ({}))) as { dashboards?: unknown };
  if (!Array.isArray(body.dashboards)) throw unavailable("Explore's list of dashboards is not in the expected form.");
  return body.dashboards as Listed[];
}

function homePage(viewer: Caller, dashboards: Listed[]): string {
  const rows = dashboards
    .map(
      (d) =>
        `<tr><td><a href="d/${encodeURIComponent(d.id)}">${escapeHtml(d.title || d.id)}</a></td><td>${escapeHtml(d.owner)}</td>` +
        `<td>${d.cards > 0 ? `${d.cards} cards` : 'one question'}</td><td>${escapeHtml(d.visibility)}</td>` +
        `<td><time datetime="${escapeHtml(d.created_at)}">${escapeHtml(d.created_at.slice(0, 16).replace('T', ' '))}</time></td></tr>`,
    )
    .join('\n');
  const list =
    dashboards.length === 0
      ? '<p class="muted">No dashboard is shared with you yet. Dashboards are published from the explore console.</p>'
      : `<table><thead><tr><th>Title</th><th>Owner</th><th>Kind</th><th>Shared</th><th>Created (UTC)</th></tr></thead><tbody>\n${rows}\n</tbody></table>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc · dashboards</title><link rel="icon" href="data:,"><link rel="stylesheet" href="ui/base.css">
</head><body>
<header><h1>svc · dashboards</h1><span>${escapeHtml(viewer.user)}</span></header>
<main><section><h2>Dashboards you may open</h2>
${list}
</section></main>
</body></html>
`;
}
