import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { createRetrievalApp } from '../../src/retrieval/service.ts';
import { checkedPages, launchBrowser, signIn } from '../support/browser.ts';
import { exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';

// The sign-in box every console shares (platform/web/sign-in.js), in headless Chromium against running services: the
// first screen asks kindly and asks the service nothing, the box offers the policy's roles, applies on Enter and not
// when focus leaves it, is remembered, signs out; behind an ingress the header shows the ingress's identity instead.

let db: Database;
let explore: ExploreHarness;
let retrieval: RetrievalHarness;
const servers: Record<'explore' | 'retrieval' | 'retrievalServe', RunningServer> = {} as never;
let browser: Browser;
const POLICY_ROLES: string[] = JSON.parse(readFileSync('policies/data.json', 'utf8')).svc.config.known_roles;

beforeAll(async () => {
  execFileSync('bash', ['scripts/install-chromium.sh'], { stdio: 'inherit' });
  db = await openPglite({});
  [explore, retrieval] = await Promise.all([exploreHarness({ SVC_COST_GATE: 'false' }), retrievalHarness(db)]);
  servers.explore = await startServer(explore.app, 0, '127.0.0.1');
  servers.retrieval = await startServer(retrieval.app, 0, '127.0.0.1');
  // as `svc serve` builds it: no sign-in box, the ingress (here the browser context's headers) says who calls
  servers.retrievalServe = await startServer(createRetrievalApp(retrieval.deps, { devIdentity: false }), 0, '127.0.0.1');
  expect((await retrieval.json('POST', '/collections', who.engineer, { slug: 'notes', name: 'Notes', allowed_roles: [] })).status).toBe(
    201,
  );
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  for (const s of Object.values(servers)) await s?.close();
  await explore?.close();
  await retrieval?.close();
  await db?.close();
});

const newPage = checkedPages(() => browser);

/** Opens a console and records every request the page makes after the page itself and its files. */
async function open(url: string): Promise<{ page: Page; calls: string[] }> {
  const page = await newPage();
  const calls: string[] = [];
  page.on('request', (req) => {
    const path = new URL(req.url()).pathname;
    if (path !== '/' && !path.startsWith('/ui/')) calls.push(`${req.method()} ${path}`);
  });
  await page.goto(url);
  return { page, calls };
}

/** Text of every error element that is shown. */
const shownErrors = (page: Page) =>
  page.$$eval('.error', (els) =>
    els.filter((el) => (el as HTMLElement).offsetParent !== null && el.textContent?.trim()).map((el) => el.textContent),
  );

describe.each(['explore', 'retrieval'] as const)('the %s console under svc dev', (name) => {
  it('first asks to sign in, kindly: no error, and no call that needs an identity', async () => {
    const { page, calls } = await open(servers[name].url);
    await page.waitForSelector('#sign-in [name=user]');
    expect(await page.textContent('#start')).toContain('Sign in to start');
    expect(await page.textContent('#start')).toContain(POLICY_ROLES.join(', '));
    expect(await page.isHidden('main:not(#start)')).toBe(true);
    expect(await shownErrors(page)).toEqual([]);
    expect(calls).toEqual([]);
  });

  it("offers the policy's roles, applies on Enter and not when focus leaves, remembers, and signs out", async () => {
    const { page, calls } = await open(servers[name].url);
    await page.waitForSelector('#sign-in [name=user]');
    const offered =
      name === 'explore'
        ? (await page.$$eval('#sign-in select[name=role] option', (os) => os.map((o) => (o as HTMLOptionElement).value))).filter(Boolean)
        : await page.$$eval('#sign-in input[name=roles]', (is) => is.map((i) => (i as HTMLInputElement).value));
    expect(offered).toEqual(POLICY_ROLES);

    // typing and leaving the box applies nothing
    await page.fill('#sign-in [name=user]', 'eve');
    await page.click('h1');
    expect(await page.locator('#signed-in-as').count()).toBe(0);
    expect(calls).toEqual([]);

    await signIn(page, 'eve', 'svc-engineer');
    expect(await page.textContent('#signed-in-as')).toMatch(/Signed in as eve · svc-engineer/);
    expect(await page.isHidden('#sign-in')).toBe(true);
    await expect.poll(() => calls.length).toBeGreaterThan(0);
    expect(await shownErrors(page)).toEqual([]);

    await page.reload();
    await page.waitForSelector('#signed-in-as');
    expect(await page.locator('#start').count()).toBe(0);

    await page.click('#sign-out');
    await page.waitForSelector('#sign-in [name=user]');
    expect(await page.textContent('#start')).toContain('Sign in to start');
  });
});

it('explore answers a question asked after signing in, sent with Ctrl+Enter from the multi-line box', async () => {
  const { page } = await open(servers.explore.url);
  await signIn(page, 'ana', 'svc-analyst');
  await page.fill('#question', 'how many customers are there per nation');
  await page.press('#question', 'Enter'); // a new line, not a question
  expect(await page.inputValue('#question')).toBe('how many customers are there per nation\n');
  await page.press('#question', 'Control+Enter');
  await expect.poll(() => page.textContent('#count')).toBe('25 rows');
  expect(await shownErrors(page)).toEqual([]);
});

it('retrieval leaves no error on screen once a read succeeds after one that was refused', async () => {
  const { page } = await open(servers.retrieval.url);
  // the first read of the collections is refused, as it was for a page that asked before anyone had signed in
  let refused = false;
  await page.route('**/collections', async (route) => {
    if (refused) return route.continue();
    refused = true;
    await route.fulfill({
      status: 401,
      contentType: 'application/problem+json',
      body: JSON.stringify({
        title: 'Unauthorized',
        status: 401,
        detail: 'No caller identity: the request must come through the ingress.',
      }),
    });
  });
  await signIn(page, who.engineer.user, who.engineer.roles);
  await expect.poll(() => shownErrors(page)).toEqual(['No caller identity: the request must come through the ingress.']);
  await page.click('#sign-out');
  await signIn(page, who.engineer.user, who.engineer.roles);
  await page.waitForSelector('#collections li[data-slug="notes"]');
  expect(await shownErrors(page)).toEqual([]);
});

it('under svc serve shows who the ingress says is signed in, with no inputs', async () => {
  const context = await browser.newContext({ extraHTTPHeaders: { 'X-User-Id': 'eve', 'X-User-Role': 'svc-engineer' } });
  const page = await context.newPage();
  await page.goto(servers.retrievalServe.url);
  await page.waitForSelector('#signed-in-as');
  expect(await page.textContent('#signed-in-as')).toMatch(/Signed in as eve · svc-engineer/);
  expect(await page.locator('#identity input, #identity select, #sign-out').count()).toBe(0);
  await page.waitForSelector('#collections li[data-slug="notes"]');
  await context.close();
});
