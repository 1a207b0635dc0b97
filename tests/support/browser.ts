import { chromium, type Browser, type Page } from 'playwright-core';
import { afterEach, expect } from 'vitest';

// Debian's Chromium, headless, with the flags that keep it off the network (this machine has none).
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.SVC_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * What goes wrong in a page from now on: uncaught errors and console errors, among them every Content-Security-Policy
 * violation ("Refused to ..."). Chromium's note of an HTTP error answer is left out: the pages show those themselves.
 */
export function pageFailures(page: Page): string[] {
  const failures: string[] = [];
  page.on('pageerror', (err) => failures.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource: the server responded with a status of'))
      failures.push(msg.text());
  });
  return failures;
}

/**
 * Every page a test opens must run without an error or a Content-Security-Policy violation: the function returned
 * opens a page of `browser()`, and after each test the failures of the last page opened are asserted empty.
 */
export function checkedPages(browser: () => Browser): () => Promise<Page> {
  let failures: string[] = [];
  afterEach(() => {
    const seen = failures;
    failures = [];
    expect(seen).toEqual([]);
  });
  return async () => {
    const page = await browser().newPage();
    failures = pageFailures(page);
    return page;
  };
}

/**
 * Signs in through a console's sign-in box (platform/web/sign-in.js) as a person would: types the user name, picks the
 * role (or ticks each of several roles), presses Enter, and waits until the header says who is signed in.
 */
export async function signIn(page: Page, user: string, roles: string | readonly string[]): Promise<void> {
  const list = typeof roles === 'string' ? roles.split(',').filter(Boolean) : roles;
  await page.fill('#sign-in [name=user]', user);
  if ((await page.locator('#sign-in select[name=role]').count()) > 0) await page.selectOption('#sign-in select[name=role]', list[0] ?? '');
  else for (const role of list) await page.check(`#sign-in input[name=roles][value="${role}"]`);
  await page.press('#sign-in [name=user]', 'Enter');
  await page.waitForSelector('#signed-in-as');
}
