import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Env } from './config.ts';
import { openObjectStore, type ObjectStore } from './objects/index.ts';

// Where dashboard pages live, shared by explore (which writes them) and the runtime (which reads them): the object
// store at SVC_DASHBOARDS_STORE (a folder or s3://bucket/prefix), else the folder SVC_DASHBOARDS_DIR (its earlier
// name), else `dashboards` in the data folder. Each page is one object named by its dashboard's id.
export type PagesConfig = { DASHBOARDS_STORE?: string | undefined; DASHBOARDS_DIR?: string | undefined };

export const openDashboardPages = (cfg: PagesConfig, dataDir: string, env: Env): ObjectStore =>
  openObjectStore(cfg.DASHBOARDS_STORE ?? cfg.DASHBOARDS_DIR ?? join(dataDir, 'dashboards'), env);

export const pageKey = (id: string) => `${id}.html`;
export const pageDigest = (page: string | Uint8Array) => createHash('sha256').update(page).digest('hex');

/** The largest page either side handles: a page holds at most SVC_MAX_RESULT_BYTES of rows, and some markup. */
export const MAX_PAGE_BYTES = 64 * 1024 * 1024;

/**
 * The one stylesheet of every dashboard page, inline so that the page stands alone. The page's CSP admits it by its
 * hash: a page whose stylesheet differs shows unstyled, never styled by something else. Its colours are the consoles'
 * palette (src/platform/web/base.css, light and dark) as custom properties, since a page can link no stylesheet.
 * Changing this text leaves every page published with the old one unstyled unless its hash joins EARLIER_STYLES.
 */
export const DASHBOARD_STYLE =
  ':root{color-scheme:light dark;--fg:#1d2733;--bg:#f6f7f9;--surface-2:#fbfcfd;--rule:#eef0f3;--accent:#2f6fae;--danger:#b3261e}' +
  '@media (prefers-color-scheme:dark){:root{--fg:#e3e7ec;--bg:#12171d;--surface-2:#222a33;--rule:#2a333d;--accent:#6ea8e0;--danger:#f28b82}}' +
  'body{font-family:system-ui,sans-serif;margin:2rem;color:var(--fg);background:var(--bg)}table{border-collapse:collapse}' +
  'td,th{border-bottom:1px solid var(--rule);padding:.2rem .6rem;text-align:left}pre{background:var(--surface-2);padding:.6rem}' +
  '.masked{font-size:.7rem;color:var(--danger)}svg text{fill:var(--fg)}';

/** The stylesheets of pages published before this one, still admitted so those pages keep their look. */
const EARLIER_STYLES = [
  'body{font-family:system-ui,sans-serif;margin:2rem;color:#1d2733}table{border-collapse:collapse}td,th{border-bottom:1px solid #e5e8ec;padding:.2rem .6rem;text-align:left}pre{background:#f6f7f9;padding:.6rem}.masked{font-size:.7rem;color:#b3261e}',
];

const styleHash = (style: string) => `'sha256-${createHash('sha256').update(style).digest('base64')}'`;

/**
 * The stylesheet of a dashboard of cards (platform/dashboard-cards.ts): the page's own, and its cards one under the
 * other, each a frame of the page's width. Each card keeps DASHBOARD_STYLE inside its frame.
 */
export const COMPOSITE_STYLE = `${DASHBOARD_STYLE}.cards{display:grid;gap:1.5rem}.card{width:100%;height:42rem;border:1px solid var(--rule)}`;

/**
 * What a dashboard page may do in a browser: apply its own stylesheet, and nothing else. It holds no script, image,
 * font or link (the chart is inline SVG with presentation attributes), so everything else is 'none': no script runs,
 * not even one that slipped through escaping, and no site may frame the page. A dashboard of cards shows each card
 * in a sandboxed srcdoc frame, which needs no source to be allowed (its document inherits this policy).
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  `style-src ${[DASHBOARD_STYLE, COMPOSITE_STYLE, ...EARLIER_STYLES].map(styleHash).join(' ')}`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers every response that carries a dashboard page sends, whoever serves it. */
export const DASHBOARD_PAGE_HEADERS = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'X-Content-Type-Options': 'nosniff',
} as const;
