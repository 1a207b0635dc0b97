import { readdirSync } from 'node:fs';
import { pageRoutes, type VendorFiles } from '../../platform/web/pages.ts';
import type { SignInOptions } from '../../platform/web/sign-in-routes.ts';
import { traceLinkMeta, type TraceLinks } from '../../platform/web/trace-links.ts';

// The console is static files (no build step): index.html, console.js and console.css, with the shared DOM helpers;
// it calls the same HTTP API as every other client. pdf.js (pdfjs-dist) draws cited PDF pages: its module, its
// worker and its standard fonts are served from the installed package under /ui/vendor/, never from a CDN.

const pdfjsRoot = new URL('./', import.meta.resolve('pdfjs-dist/package.json'));

function pdfjsFiles(): VendorFiles {
  const fonts = new URL('standard_fonts/', pdfjsRoot);
  return {
    'pdf.mjs': new URL('build/pdf.min.mjs', pdfjsRoot),
    'pdf.worker.mjs': new URL('build/pdf.worker.min.mjs', pdfjsRoot),
    ...Object.fromEntries(
      readdirSync(fonts)
        .filter((name) => /\.(pfb|ttf)$/.test(name))
        .map((name) => [`standard_fonts/${name}`, new URL(name, fonts)]),
    ),
  };
}

/**
 * GET / (the console), its module and style under /ui/ with the strict Content-Security-Policy, and the sign-in routes.
 * With `traceLinks` (tracing on) an answer links to its trace in the tracker's UI.
 */
export const consoleRoutes = ({ traceLinks, ...opts }: SignInOptions & { traceLinks?: TraceLinks | undefined }) =>
  pageRoutes({
    page: new URL('./index.html', import.meta.url),
    dirs: [new URL('./', import.meta.url)],
    vendor: pdfjsFiles(),
    meta: traceLinkMeta(traceLinks),
    ...opts,
  });
