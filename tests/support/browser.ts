import { chromium, type Browser, type Page } from 'playwright-core';

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
