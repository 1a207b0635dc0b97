import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

// axe-core (npm) run inside a page. Its source goes in through Playwright's evaluate (the DevTools protocol), which
// the pages' strict CSP does not govern, so the pages are checked exactly as they are served.
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

// `preload: false`: axe otherwise reads every stylesheet into a CSSOM copy first (for its one orientation-lock rule),
// and for the explore editor's shadow root it does so with inline styles the page's CSP refuses, a violation of axe's
// own making. No console page locks its orientation.
const OPTIONS = { preload: false };

type Violation = { id: string; impact: string | null; help: string; nodes: { target: unknown[]; failureSummary?: string }[] };

/** The violations of impact serious or critical on the page as it is now, each as one readable line per element. */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(
    (options) =>
      (window as unknown as { axe: { run(ctx: Document, options: object): Promise<{ violations: unknown[] }> } }).axe
        .run(document, options)
        .then((r) => r.violations),
    OPTIONS,
  )) as Violation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) =>
      v.nodes.map(
        (n) => `${v.impact} ${v.id} (${v.help}) at ${JSON.stringify(n.target)}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ')}`,
      ),
    );
}
