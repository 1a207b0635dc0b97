import { execFileSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { seriousViolations } from './axe.ts';
import { launchBrowser, pageFailures } from './browser.ts';
import { trackerCall, trackerHarness, type TrackerHarness } from './tracker.ts';

// A tracker UI test file's setting: the tracker on PGlite served on a port, headless Chromium, the REST calls a
// client makes, and pages opened on a view that must show no error. After each test, the pages it opened must have
// logged no error or Content-Security-Policy violation.

export type Json = Record<string, any>;

export function trackerUi(seed: (ui: { call: TrackerUi['call']; url: () => string }) => Promise<void> = async () => {}) {
  let tracker: TrackerHarness;
  let server: RunningServer;
  let browser: Browser;
  let failures: string[][] = [];
  const call: TrackerUi['call'] = (method, path, body, api) => trackerCall(server.url, method, path, body, api);
  const url = () => server.url;

  beforeAll(async () => {
    execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
    tracker = await trackerHarness();
    server = await startServer(tracker.app, 0, '127.0.0.1');
    await seed({ call, url });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await tracker?.close();
  });
  afterEach(() => {
    const seen = failures.flat();
    failures = [];
    expect(seen).toEqual([]);
  });

  /** Opens a view and waits until it is shown, with no error in the page's alert. */
  async function open(hash: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    failures.push(pageFailures(page));
    await page.goto(`${server.url}/${hash}`);
    await page.waitForSelector('#view[aria-busy=false]');
    expect(await page.isVisible('#error'), (await page.textContent('#error')) ?? '').toBe(false);
    return page;
  }

  /** The page has no serious or critical accessibility violation, in the light scheme and the dark one. */
  async function expectAccessible(page: Page): Promise<void> {
    const found: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      found.push(...(await seriousViolations(page)).map((v) => `${colorScheme}: ${v}`));
    }
    await page.emulateMedia({ colorScheme: 'light' });
    expect(found, found.join('\n')).toEqual([]);
  }

  return { call, url, open, expectAccessible };
}

export type TrackerUi = {
  call: (method: string, path: string, body?: unknown, api?: string) => Promise<Json>;
};
