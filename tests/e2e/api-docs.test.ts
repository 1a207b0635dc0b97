import { execFileSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { MLFLOW_API_VERSION } from '../../src/tracker/server-info.ts';
import { checkedPages, launchBrowser } from '../support/browser.ts';
import { runtimeHarness } from '../support/dashboards.ts';
import { exploreHarness } from '../support/explore.ts';
import { retrievalHarness } from '../support/retrieval.ts';
import { trackerHarness } from '../support/tracker.ts';

// GET /docs of each service in headless Chromium: Scalar's reference renders the service's /openapi.json under the
// page's CSP, lists its operations, and its try-it client sends a request to the same origin and shows the answer,
// with no console error and no Content-Security-Policy violation.

let browser: Browser;
const servers: Record<string, RunningServer> = {};
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  const retrieval = await retrievalHarness(await openPglite({}));
  const explore = await exploreHarness();
  const runtime = await runtimeHarness(explore);
  const tracker = await trackerHarness();
  closers.push(
    () => runtime.close(),
    () => explore.close(),
    () => retrieval.close(),
  );
  servers.retrieval = await startServer(retrieval.app, 0, '127.0.0.1');
  servers.explore = await startServer(explore.app, 0, '127.0.0.1');
  servers['dashboards runtime'] = await startServer(runtime.app, 0, '127.0.0.1');
  servers.tracker = await startServer(tracker.app, 0, '127.0.0.1');
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  for (const server of Object.values(servers)) await server.close();
  for (const close of closers) await close();
});

const newPage = checkedPages(() => browser);

/** Every CSP violation the page reports, as the browser reports it (console messages can be missed or reworded). */
async function violations(page: Page): Promise<string[]> {
  const seen: string[] = [];
  await page.exposeFunction('reportViolation', (v: string) => seen.push(v));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      (window as unknown as { reportViolation: (v: string) => void }).reportViolation(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`),
    );
  });
  return seen;
}

type Document = { info: { title: string }; paths: Record<string, Record<string, { summary?: string }>> };

// The operation each page's try-it sends: the caller (an administrator, as the ingress would say) goes in the
// browser's headers. The runtime's one operation opens a dashboard by id: its document's example id names none, so
// the answer is the runtime's 404, sent and shown like any other.
const TRIES: Record<string, { path: string; status?: number }> = {
  retrieval: { path: '/collections', status: 200 },
  explore: { path: '/me', status: 200 },
  'dashboards runtime': { path: '/d/{id}', status: 404 },
  tracker: { path: '/version', status: 200 },
};

describe('GET /docs in headless Chromium', () => {
  for (const [service, tryIt] of Object.entries(TRIES)) {
    it(`renders ${service}'s reference, and its try-it ${tryIt.status ? 'calls' : 'opens'} ${tryIt.path} under the CSP`, async () => {
      const base = servers[service]!.url;
      const doc = (await (await fetch(`${base}/openapi.json`)).json()) as Document;
      const operation = doc.paths[tryIt.path]?.get;
      expect(operation?.summary).toBeTruthy();

      const page = await newPage();
      const reported = await violations(page);
      await page.setExtraHTTPHeaders({ 'X-User-Id': 'ada', 'X-User-Role': 'svc-admin' });
      const csp = (await page.goto(`${base}/docs`))?.headers()['content-security-policy'] ?? '';
      expect(csp).toMatch(/script-src 'self';/);
      expect(csp).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline|https?:/);

      await expect.poll(() => page.locator('h1').first().textContent()).toContain(doc.info.title);
      const summaries = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.summary ?? ''));
      for (const summary of summaries) expect(await page.getByText(summary, { exact: true }).count(), summary).toBeGreaterThan(0);

      await page.getByText(operation!.summary!, { exact: true }).first().click();
      await page.locator('button', { hasText: `Test Request(get ${tryIt.path})` }).click();
      const send = page.locator('button', { hasText: `Send get request to ${tryIt.path}` }).first();
      await expect.poll(() => send.isVisible()).toBe(true);
      if (!tryIt.status) return void expect(reported).toEqual([]);
      const answered = page.waitForResponse((res) => new URL(res.url()).pathname.startsWith(tryIt.path.replace(/\{.*$/, '')));
      await send.click();
      expect((await answered).status()).toBe(tryIt.status);
      await expect.poll(() => page.getByText(String(tryIt.status), { exact: false }).count()).toBeGreaterThan(0);
      expect(reported).toEqual([]);
    }, 90_000);
  }

  it("the tracker's page points to MLflow's REST reference of the release it speaks", async () => {
    const page = await newPage();
    await page.goto(`${servers.tracker!.url}/docs`);
    const link = page.locator(`a[href="https://mlflow.org/docs/${MLFLOW_API_VERSION}/api_reference/rest-api.html"]`);
    await expect.poll(() => link.count()).toBeGreaterThan(0);
  });
});
