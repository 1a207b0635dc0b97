import { pageRoutes } from '../../platform/web/pages.ts';
import type { SignInOptions } from '../../platform/web/sign-in-routes.ts';
import { traceLinkMeta, type TraceLinks } from '../../platform/web/trace-links.ts';
import { bundleEditor } from './editor-bundle.ts';

// The console is static files (no build step): index.html, its modules and console.css, with the shared DOM helpers;
// it calls the same HTTP API as every other client. The SQL editor's CodeMirror is the one bundle, made in memory.

/**
 * GET / (the console), its module and style under /ui/ with the strict Content-Security-Policy, and the sign-in routes.
 * With `traceLinks` (tracing on) an answer links to its question's trace in the tracker's UI.
 */
export const consoleRoutes = ({ traceLinks, ...opts }: SignInOptions & { traceLinks?: TraceLinks | undefined }) =>
  pageRoutes({
    meta: traceLinkMeta(traceLinks),
    page: new URL('./index.html', import.meta.url),
    dirs: [new URL('./', import.meta.url)],
    vendor: {
      // ECharts' self-contained ES module build: no eval, so the page's CSP stays strict (dashboards/chart-svg.ts
      // draws the same charts on the server for the dashboard pages)
      'echarts.js': new URL(import.meta.resolve('echarts/dist/echarts.esm.min')),
      'codemirror.js': bundleEditor,
    },
    ...opts,
  });
