import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { Hono } from 'hono';
import type { AppEnv } from '../http.ts';
import { signInRoutes, type SignInOptions } from './sign-in-routes.ts';

// Every service's web page is served the same way: one HTML page at `/` and its ES modules and stylesheets under
// `/ui/`, read once at start-up (they ship with the code; there is no build step and nothing from a CDN).

/** Only the service's own origin: no inline script or style, no third-party anything, not framed by another site. */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.bcmap': 'application/octet-stream',
  '.pfb': 'application/octet-stream',
  '.ttf': 'font/ttf',
};

/**
 * This folder: the DOM helpers every page imports as `./dom.js` (tsconfig.web.json's rootDirs says the same) and the
 * stylesheet every page links as `ui/base.css` before its own.
 */
/** Text (or any value) safe inside HTML, in an element or a quoted attribute. */
export const escapeHtml = (value: unknown): string =>
  String(value ?? '').replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

export const SHARED_UI_DIR = new URL('./', import.meta.url);
/** The shared stylesheet, for a page served without pageRoutes (the dashboards runtime's home). */
export const BASE_CSS = new URL('./base.css', import.meta.url);

type Asset = { body: string | Uint8Array<ArrayBuffer>; type: string };

function send(body: Asset['body'], type: string): Response {
  return new Response(body, {
    headers: {
      'Content-Type': type,
      'Cache-Control': 'no-cache',
      'Content-Security-Policy': PAGE_CSP,
      'X-Content-Type-Options': 'nosniff',
    },
  });
}

/** The .js and .css files under each folder by their path relative to it; the same path in two folders is a mistake. */
function readAssets(dirs: URL[]): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const dir of dirs) {
    for (const rel of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
      const type = TYPES[extname(rel)];
      if (!type || type === TYPES['.html']) continue;
      const path = rel.split('\\').join('/');
      if (assets.has(path)) throw new Error(`web page asset ${path} exists in two folders`);
      assets.set(path, { body: readFileSync(new URL(path, dir), 'utf8'), type });
    }
  }
  return assets;
}

// The sign-in box of a page sits between these two comments; only `svc dev` serves it.
const DEV_IDENTITY = /[ \t]*<!-- dev-identity\b[\s\S]*?<!-- \/dev-identity -->\n?/g;

/**
 * Files of npm packages a page uses (an editor, a chart library, a PDF renderer), served from the installed package
 * under /ui/vendor/<name>: nothing comes from a CDN. Keys are the served names; values are files, usually from
 * the package's resolved entry or a URL beside it, or a function that makes the text in memory (a bundle of many
 * modules), called on the file's first request and kept; a failed one is tried again on the next.
 */
export type VendorFiles = Record<string, URL | (() => Promise<string>)>;

type Served = { read: () => Promise<Asset['body']>; type: string } | Asset;

/** Each vendor file is read (or made) at its first request and kept: megabytes a page may never ask for stay on disk. */
function readVendor(files: VendorFiles | undefined): Map<string, Served> {
  const assets = new Map<string, Served>();
  for (const [name, file] of Object.entries(files ?? {})) {
    const type = TYPES[extname(name)];
    if (!type) throw new Error(`vendor file ${name} has no known type`);
    const read =
      typeof file === 'function'
        ? file
        : async () => {
            const bytes = await readFile(file);
            return type.startsWith('text/') ? bytes.toString('utf8') : new Uint8Array(bytes);
          };
    assets.set(`vendor/${name}`, { read: once(read), type });
  }
  return assets;
}

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    if (!made) {
      made = make();
      made.catch(() => (made = undefined));
    }
    return made;
  };
}

/** Settings the page's scripts read (trace-links.ts's), as <meta name content> tags at the end of its head. */
function withMeta(page: string, meta: Record<string, string>): string {
  const tags = Object.entries(meta).map(([name, content]) => `<meta name="${escapeHtml(name)}" content="${escapeHtml(content)}">\n`);
  return tags.length ? page.replace('</head>', `${tags.join('')}</head>`) : page;
}

/**
 * GET / (the page) and GET /ui/<path> for every module and stylesheet in `dirs` plus the shared helpers and the
 * `vendor` files, all with the strict CSP, and the sign-in box's two routes (sign-in-routes.ts). Paths are looked up in
 * a fixed map, so nothing outside those files can be asked for. Without `devIdentity` the page has no sign-in box:
 * behind an ingress, the ingress says who calls. `meta` adds <meta> tags the page's scripts read.
 */
export function pageRoutes(
  opts: { page: URL; dirs: URL[]; vendor?: VendorFiles; meta?: Record<string, string> } & SignInOptions,
): Hono<AppEnv> {
  const source = readFileSync(opts.page, 'utf8');
  const page = withMeta(opts.devIdentity ? source : source.replace(DEV_IDENTITY, ''), opts.meta ?? {});
  const assets = new Map<string, Served>([...readAssets([...opts.dirs, SHARED_UI_DIR]), ...readVendor(opts.vendor)]);
  return new Hono<AppEnv>()
    .route('/', signInRoutes(opts))
    .get('/', () => send(page, TYPES['.html']!))
    .get('/ui/*', async (c) => {
      const asset = assets.get(c.req.path.slice('/ui/'.length));
      if (!asset) return c.notFound();
      return send('read' in asset ? await asset.read() : asset.body, asset.type);
    });
}
