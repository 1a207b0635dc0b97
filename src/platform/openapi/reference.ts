import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { Context } from 'hono';
import type { AppEnv } from '../http.ts';
import { escapeHtml, PAGE_CSP } from '../web/pages.ts';

// GET /docs: Scalar's API reference (@scalar/api-reference), its standalone browser bundle served by the service
// itself (a cluster may have no internet), configured by data attributes (no inline script). Its CSP is the
// consoles' (PAGE_CSP) but for styles (docsCsp): no 'unsafe-eval', no inline script, nothing from another origin.

const MAIN = import.meta.resolve('@scalar/api-reference'); // its dist/index.js
const BUNDLE = new URL('./browser/standalone.js', MAIN);
const VERSION = (JSON.parse(readFileSync(new URL('../package.json', MAIN), 'utf8')) as { version: string }).version;

/** Where the page loads the bundle from; the version in the path lets a browser keep it for good. */
const REFERENCE_BUNDLE_PATH = `/docs/scalar-api-reference-${VERSION}.js`;
/** The page's own script, run before the bundle (reference-setup.js says why). */
const REFERENCE_SETUP_PATH = '/docs/setup.js';
const SETUP = readFileSync(new URL('./reference-setup.js', import.meta.url), 'utf8');

// What the page asks of the bundle: the document of this origin, requests sent straight to it (no Scalar proxy),
// no fonts, telemetry or agent from Scalar's servers.
const CONFIGURATION = {
  url: 'openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  hideClientButton: false,
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
};

/**
 * The CSP of /docs: PAGE_CSP's, except for styles. The bundle's own <style> elements carry this answer's nonce
 * (reference-setup.js); the style attributes it writes (code blocks' line counts, a scrollbar probe) cannot carry
 * one, and vary, so style attributes alone are 'unsafe-inline': no selector, no script, and url() stays 'self'.
 */
export function docsCsp(nonce: string): string {
  return PAGE_CSP.replace("style-src 'self'", `style-src 'self' 'nonce-${nonce}'; style-src-attr 'unsafe-inline'`);
}

/** The page: a title, the nonce for the bundle's stylesheet, the configuration, and the bundle. */
export function docsPage(title: string, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta property="csp-nonce" content="${nonce}">
<title>${escapeHtml(title)} API</title>
</head>
<body>
<script id="api-reference" type="application/json" data-configuration="${escapeHtml(JSON.stringify(CONFIGURATION))}"></script>
<script src="${REFERENCE_SETUP_PATH.slice(1)}"></script>
<script src="${REFERENCE_BUNDLE_PATH.slice(1)}"></script>
</body>
</html>
`;
}

export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

// Read on first use (4.8 MB, 1.4 MB gzipped; zipping it takes a moment once), once per process.
let bundle: { plain: Uint8Array<ArrayBuffer>; gzip: Uint8Array<ArrayBuffer> } | undefined;
const loadBundle = () => {
  if (!bundle) {
    const plain = new Uint8Array(readFileSync(BUNDLE));
    bundle = { plain, gzip: new Uint8Array(gzipSync(plain)) };
  }
  return bundle;
};

/** GET /docs/<asset>: the page's setup script or Scalar's bundle; any other path is not found. */
export function sendReferenceAsset(c: Context<AppEnv>): Response {
  if (c.req.path === REFERENCE_SETUP_PATH) return sendSetup();
  if (c.req.path === REFERENCE_BUNDLE_PATH) return sendBundle(c);
  return c.notFound() as Response;
}

function sendSetup(): Response {
  return new Response(SETUP, {
    headers: { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' },
  });
}

/** The bundle, gzipped when the browser takes it, cacheable for good. */
function sendBundle(c: Context<AppEnv>): Response {
  const { plain, gzip } = loadBundle();
  const zipped = /\bgzip\b/.test(c.req.header('Accept-Encoding') ?? '');
  return new Response(zipped ? gzip : plain, {
    headers: {
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
      Vary: 'Accept-Encoding',
      ...(zipped ? { 'Content-Encoding': 'gzip' } : {}),
    },
  });
}
