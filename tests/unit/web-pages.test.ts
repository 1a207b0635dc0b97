import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExploreApp } from '../../src/explore/service.ts';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { createRetrievalApp } from '../../src/retrieval/service.ts';
import type { AppEnv } from '../../src/platform/http.ts';
import { loadPlatformConfig } from '../../src/platform/config.ts';
import { traceLinks } from '../../src/platform/web/trace-links.ts';
import { exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { retrievalHarness, type RetrievalHarness } from '../support/retrieval.ts';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// The three web pages (tracker UI, retrieval and explore consoles) through HTTP: the page and everything it loads
// come from the service's own origin under a Content-Security-Policy that allows no inline script or style, so the
// markup has none, and every module the page imports (and each of theirs) is served.

let db: Database;
let retrieval: RetrievalHarness;
let explore: ExploreHarness;
let tracker: TrackerHarness;
const apps: Record<string, () => Hono<AppEnv>> = {
  tracker: () => tracker.app,
  retrieval: () => retrieval.app,
  explore: () => explore.app,
};

beforeAll(async () => {
  db = await openPglite({});
  [retrieval, explore, tracker] = await Promise.all([retrievalHarness(db), exploreHarness(), trackerHarness()]);
});
afterAll(async () => {
  await Promise.all([retrieval?.close(), explore?.close(), tracker?.close()]);
  await db?.close();
});

function expectStrictHeaders(res: Response, type: RegExp) {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(type);
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  const csp = res.headers.get('content-security-policy') ?? '';
  const directives = new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name, values]),
  );
  expect(directives.get('default-src')).toEqual(["'self'"]);
  expect(directives.get('script-src')).toEqual(["'self'"]);
  expect(directives.get('style-src')).toEqual(["'self'"]);
  expect(directives.get('object-src')).toEqual(["'none'"]);
  expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
  expect(csp).not.toContain('unsafe-');
}

/** The relative imports of a module (static `import ... from './x.js'` and `import './x.js'`). */
const importsOf = (source: string) =>
  [...source.matchAll(/^\s*import\s+(?:[^'"]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) => m[1]!);

describe.each(Object.keys(apps))('the %s page', (name) => {
  it('is served with the strict CSP, and its markup has no inline script, style or event handler', async () => {
    const res = await apps[name]!().request('/');
    expectStrictHeaders(res, /^text\/html; charset=utf-8$/);
    const html = await res.text();
    expect(html).toMatch(/<script type="module" src="ui\/[a-z]+\.js"><\/script>/);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=/i);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('serves every module the page imports, and their imports in turn, with the same CSP, none writing innerHTML', async () => {
    const app = apps[name]!();
    const html = await (await app.request('/')).text();
    const base = 'http://page.test/';
    const styles = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => new URL(m[1]!, base).pathname);
    // the look the pages share first, so the page's own stylesheet after it can override a value
    expect(styles[0]).toBe('/ui/base.css');
    expect(styles.length).toBeGreaterThan(1);
    for (const path of styles) expectStrictHeaders(await app.request(path), /^text\/css/);

    const pending = [...html.matchAll(/<script type="module" src="([^"]+)">/g)].map((m) => new URL(m[1]!, base).pathname);
    const seen = new Set<string>();
    while (pending.length) {
      const path = pending.pop()!;
      if (seen.has(path)) continue;
      seen.add(path);
      const res = await app.request(path);
      expectStrictHeaders(res, /^text\/javascript/);
      const source = await res.text();
      expect(source, path).not.toMatch(/\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML|document\.write/);
      for (const spec of importsOf(source)) pending.push(new URL(spec, `${base}${path.slice(1)}`).pathname);
    }
    expect(seen).toContain('/ui/dom.js'); // the one h() every page builds with
  });

  it('serves nothing under /ui/ but its modules and styles', async () => {
    const app = apps[name]!();
    for (const path of ['/ui/types.ts', '/ui/pages.ts', '/ui/page.ts', '/ui/index.html', '/ui/nope.js']) {
      expect((await app.request(path)).status, path).toBe(404);
    }
    // a path that leaves /ui/ is no longer a page asset: an API path, which needs a caller
    for (const path of ['/ui/../service.ts', '/ui/%2e%2e/service.ts']) {
      const escaped = await app.request(path);
      expect([401, 404], path).toContain(escaped.status);
      expect(await escaped.text()).not.toContain('import ');
    }
  });
});

describe('the sign-in box', () => {
  it.each([
    ['retrieval', () => createRetrievalApp(retrieval.deps, { devIdentity: false })],
    ['explore', () => createExploreApp(explore.deps, { devIdentity: false })],
  ] as const)('is on the %s console under svc dev, and nowhere under svc serve', async (name, served) => {
    const dev = await (await apps[name]!().request('/')).text();
    expect(dev).toContain('id="sign-in"');
    const page = await (await served().request('/')).text();
    expect(page).not.toContain('id="sign-in"');
    expect(page).toContain('id="identity"'); // where the ingress's identity is shown
    expect(page).not.toContain('dev-identity');
    expect(page).toContain('<main>');
  });
});

describe("the consoles' trace links", () => {
  const TRACING = { SVC_TRACING_ENABLED: 'true', SVC_TRACE_EXPERIMENT: '7', SVC_TRACKER_URL: 'https://tracker.example/' };

  it('are configured only with tracing on, its experiment and the tracker address all set', () => {
    expect(traceLinks(loadPlatformConfig(TRACING))).toEqual({ trackerUrl: 'https://tracker.example/', experimentId: '7' });
    for (const unset of Object.keys(TRACING)) {
      expect(traceLinks(loadPlatformConfig({ ...TRACING, [unset]: '' })), unset).toBeUndefined();
    }
    expect(traceLinks(loadPlatformConfig({ ...TRACING, SVC_TRACING_ENABLED: 'false' }))).toBeUndefined();
  });

  it.each([
    ['retrieval', (links: ReturnType<typeof traceLinks>) => createRetrievalApp(retrieval.deps, { traceLinks: links })],
    ['explore', (links: ReturnType<typeof traceLinks>) => createExploreApp(explore.deps, { traceLinks: links })],
  ] as const)('reach the %s console as two <meta> tags in its head, escaped, and nothing without them', async (_name, app) => {
    const links = { trackerUrl: 'https://tracker.example/?a=1&b="2"', experimentId: '7' };
    const page = await (await app(links).request('/')).text();
    const head = page.slice(0, page.indexOf('</head>'));
    expect(head).toContain('<meta name="svc-tracker-url" content="https://tracker.example/?a=1&amp;b=&quot;2&quot;">');
    expect(head).toContain('<meta name="svc-trace-experiment" content="7">');
    expect(await (await app(undefined).request('/')).text()).not.toContain('svc-tracker-url');
  });
});
