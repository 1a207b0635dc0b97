import { appendAudit } from '../../platform/audit/index.ts';
import { conflict, notFound, unprocessable } from '../../platform/errors.ts';
import type { Caller } from '../../platform/identity.ts';
import type { ExploreDeps } from '../deps.ts';
import * as store from '../store.ts';
import { checkChart, type ChartSpec } from './chart.ts';
import { pageSettled } from './drawing.ts';
import { pageStore, readContent, writePage } from './page-store.ts';
import { decideDashboard, type DashboardView, view } from './sharing.ts';

/**
 * PUT /dashboards/{id}/chart: its owner draws the same published rows with another chart; the page is rendered and
 * signed again. Who may change it is the policy's `share` decision (the owner only); to anyone else it does not
 * exist. The new page goes under a key of its own, so the runtime never reads a page whose digest the row does not
 * name yet; the previous one is removed once the row points at the new one.
 */
export async function changeChart(deps: ExploreDeps, caller: Caller, id: string, asked: ChartSpec): Promise<DashboardView> {
  const found = await store.findDashboard(deps.db, id);
  if (!found || !(await decideDashboard(deps.policy, caller, 'share', found)).allow) throw notFound(`Dashboard '${id}' does not exist.`);
  // the page published is drawn first (a page that could not be drawn is drawn now, with the chart asked for)
  const d = await pageSettled(deps, id, found);
  if (d.cards) throw unprocessable(`Dashboard '${id}' is a dashboard of cards: change a card's chart, then build the dashboard again.`);
  const chart = checkChart(asked, d.columns);
  const content = await readContent(deps.pages, id);
  if (!content)
    throw conflict(
      d.page_state === 'failed'
        ? `Dashboard '${id}' could not be published (${d.page_error ?? 'no reason recorded'}): ask its question again.`
        : `Dashboard '${id}' was published before charts could change: ask its question again.`,
    );
  const key = `${id}.${Date.now().toString(36)}.html`;
  const written = await writePage(pageStore(deps), { id, owner: d.owner, key, content, chart });
  await deps.db.transaction(async (tx) => {
    await store.updateChart(tx, id, { ...written, chart });
    await appendAudit(tx, {
      service: 'explore',
      action: 'dashboard_chart',
      actor: caller.user,
      detail: { dashboard_id: id, before: d.chart, after: chart },
    });
  });
  if (d.object_key && d.object_key !== key) await deps.pages.delete(d.object_key);
  return view(deps, { ...d, ...written, chart });
}
