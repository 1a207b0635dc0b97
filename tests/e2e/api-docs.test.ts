import { execFileSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { checkedPages, launchBrowser } from '../support/browser.ts';
import { runtimeHarness } from '../support/dashboards.ts';
import { exploreHarness } from '../support/explore.ts';
import { retrievalHarness } from '../support/retrieval.ts';

// GET /docs of each service in headless Chromium: the page renders under the strict CSP with no error, names the
// service, lists every operation of /openapi.json with a section of its own, and its link to the document works.

let browser: Browser;
const servers: Record<string, RunningServer> = {};
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  const retrieval = await retrievalHarness(await openPglite({}));
  const explore = await exploreHarness();
  const runtime = await runtimeHarness(explore);
  closers.push(
    () => runtime.close(),
    () => explore.close(),
    () => retrieval.close(),
  );
  servers.retrieval = await startServer(retrieval.app, 0, '127.0.0.1');
  servers.explore = await startServer(explore.app, 0, '127.0.0.1');
  servers['dashboards runtime'] = await startServer(runtime.app, 0, '127.0.0.1');
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  for (const server of Object.values(servers)) await server.close();
  for (const close of closers) await close();
});

const newPage = checkedPages(() => browser);
type Document = { info: { title: string }; paths: Record<string, Record<string, unknown>> };

describe('GET /docs in headless Chromium', () => {
  for (const service of ['retrieval', 'explore', 'dashboards runtime']) {
    it(`renders ${service}'s every operation`, async () => {
      const base = servers[service]!.url;
      const doc = (await (await fetch(`${base}/openapi.json`)).json()) as Document;
      const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
      expect(operations.length).toBeGreaterThan(0);

      const page = await newPage();
      const res = await page.goto(`${base}/docs`);
      expect(res?.status()).toBe(200);
      await expect.poll(() => page.locator('h1').textContent()).toContain(doc.info.title);
      const headings = await page.locator('section[id] > h2').allTextContents();
      expect(headings.sort()).toEqual(operations.sort());
      for (const op of operations) expect(await page.locator('nav a', { hasText: op }).count(), op).toBeGreaterThan(0);

      const href = await page.locator('a[href="openapi.json"]').getAttribute('href');
      const linked = await page.request.get(new URL(href ?? 'missing', `${base}/docs`).href);
      expect(((await linked.json()) as Document).info.title).toBe(doc.info.title);
    }, 60_000);
  }
});
