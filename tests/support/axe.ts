import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

// axe-core (npm) run inside a page. Its source goes in through Playwright's evaluate (the DevTools protocol), which
// the pages' strict CSP does not govern, so the pages are checked exactly as they are served.
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

type Violation = { id: string; impact: string | null; help: string; nodes: { target: unknown[]; failureSummary?: string }[] };

/** The violations of impact serious or critical on the page as it is now, each as one readable line per element. */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(() =>
    (window as unknown as { axe: { run(ctx: Document): Promise<{ violations: unknown[] }> } }).axe.run(document).then((r) => r.violations),
  )) as Violation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) =>
      v.nodes.map(
        (n) => `${v.impact} ${v.id} (${v.help}) at ${JSON.stringify(n.target)}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ')}`,
      ),
    );
}
