import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';

// The web UI is three static files (no build step, nothing from a CDN); the page calls the same REST API as every
// other client, under ajax-api/2.0/mlflow/. Read once at import: the files ship with the code.
const file = (name: string) => readFileSync(new URL(`./${name}`, import.meta.url), 'utf8');
const assets = {
  page: file('index.html'),
  script: file('app.js'),
  style: file('app.css'),
};

// Only the tracker's own origin: no inline script, no third-party anything, not framed by another site.
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function send(body: string, type: string): Response {
  return new Response(body, {
    headers: {
      'Content-Type': type,
      'Cache-Control': 'no-cache',
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
    },
  });
}

/** GET / (the page) and its script and style under /ui/; every view is a hash route inside the page. */
export function uiRoutes(_deps: TrackerDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .get('/', () => send(assets.page, 'text/html; charset=utf-8'))
    .get('/ui/app.js', () => send(assets.script, 'text/javascript; charset=utf-8'))
    .get('/ui/app.css', () => send(assets.style, 'text/css; charset=utf-8'));
}
