import { pageRoutes } from '../../platform/web/pages.ts';
import { bundleEditor } from './editor-bundle.ts';

// The console is static files (no build step): index.html, its modules and console.css, with the shared DOM helpers;
// it calls the same HTTP API as every other client. The SQL editor's CodeMirror is the one bundle, made in memory.

/** GET / (the console) and its module and style under /ui/, with the strict Content-Security-Policy. */
export const consoleRoutes = (opts: { devIdentity: boolean }) =>
  pageRoutes({
    page: new URL('./index.html', import.meta.url),
    dirs: [new URL('./', import.meta.url)],
    vendor: { 'codemirror.js': bundleEditor },
    ...opts,
  });
