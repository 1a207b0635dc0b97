import type { Hono } from 'hono';
import type { AppEnv } from '../../platform/http.ts';
import { pageRoutes } from '../../platform/web/pages.ts';
import type { TrackerDeps } from '../deps.ts';

// The web UI is static files (no build step, nothing from a CDN): index.html, the ES modules app.js imports, and
// app.css. The page calls the same REST API as every other client, under ajax-api/2.0/mlflow/.

/** GET / (the page) and its modules and style under /ui/; every view is a hash route inside the page. */
export function uiRoutes(_deps: TrackerDeps): Hono<AppEnv> {
  return pageRoutes({
    page: new URL('./index.html', import.meta.url),
    dirs: [new URL('./', import.meta.url)],
    devIdentity: false,
    vendor: {
      // Notes and descriptions are Markdown (markdown.js): each package's one self-contained ES module, no eval, so
      // the page's CSP stays as strict as before
      'marked.js': new URL(import.meta.resolve('marked')),
      'purify.js': new URL(import.meta.resolve('dompurify')),
    },
  });
}
