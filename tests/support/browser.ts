import { chromium, type Browser } from 'playwright-core';

// Debian's Chromium, headless, with the flags that keep it off the network (this machine has none).
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.SVC_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
