import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from '../../platform/db/index.ts';
import { conflict, notFound, unavailable } from '../../platform/errors.ts';
import * as store from '../store.ts';
import type { ChartSpec } from './chart.ts';
import { pageKey } from '../../platform/dashboard-pages.ts';
import type { Drawings } from '../deps.ts';
import { contentKey, type PageContent, type PageStore, readContent, writePage } from './page-store.ts';

// A published page is drawn after POST /query has answered (publish.ts). Whoever needs the page before it is stored
// (the runtime's launch decision, a dashboard of cards, a chart change) waits for it here, up to
// SVC_DASHBOARD_PAGE_WAIT_MS (20 s, under the runtime's own 30 s wait for explore's launch answer): on the
// drawing of this process when it holds it, else on the row, which another replica's drawing will complete.

const POLL_MS = 100;

type PageWait = { db: Sql; drawings: Drawings; config: { DASHBOARD_PAGE_WAIT_MS: number } };

/**
 * Draws the page in the background: its content stored (what a new chart is drawn from), the chart drawn in the
 * worker, then the page rendered, signed and stored, and the row then names it. If the row moved on meanwhile (its chart was changed, or it was deleted and purged), the page drawn
 * is removed again. A drawing that fails stores no page and leaves the row 'failed' with why.
 */
export function drawLater(deps: PageStore, page: { id: string; owner: string; key: string; content: PageContent; chart: ChartSpec }): void {
  const drawn = (async () => {
    let written: { object_key: string; digest: string } | undefined;
    await new Promise((next) => setImmediate(next)); // the answer goes out first: none of this is its work
    try {
      const json = Buffer.from(JSON.stringify(page.content), 'utf8');
      await deps.pages.put(contentKey(page.id), json, { contentType: 'application/json', contentLength: json.length });
      written = await writePage(deps, page);
      if (!(await store.pageDrawn(deps.db, page.id, { ...written, chart: page.chart }))) {
        // the row moved on; unless another process drew the same page under the same key meanwhile, ours goes
        const now = await store.findDashboard(deps.db, page.id);
        if (now?.object_key !== written.object_key) await deps.pages.delete(written.object_key);
      }
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      deps.logger.warn({ dashboard: page.id, err: why }, 'dashboard page could not be drawn');
      if (written) await deps.pages.delete(written.object_key).catch(() => undefined);
      await store
        .pageFailed(deps.db, page.id, why)
        .catch((e: unknown) => deps.logger.warn({ dashboard: page.id, err: String(e) }, 'page failure not recorded'));
    }
  })().finally(() => deps.drawings.delete(page.id));
  deps.drawings.set(page.id, drawn);
}

/** How old a row still 'drawing' must be before a sweep takes it for one whose process stopped mid-drawing. */
export const STALE_DRAWING_SECONDS = 60;

/**
 * At start and with the periodic cleanup: a row left 'drawing' by a process that stopped before its page was stored
 * is drawn again from its content, or, when its content was never stored, marked failed with why. Drawings of this
 * process are left alone; two replicas drawing the same row store the same bytes under the same key.
 */
export async function resumeDrawings(deps: PageStore): Promise<number> {
  const rows = await store.staleDrawings(deps.db, STALE_DRAWING_SECONDS);
  let resumed = 0;
  for (const row of rows) {
    if (deps.drawings.has(row.id) || !row.chart) continue;
    const content = await readContent(deps.pages, row.id);
    if (!content) {
      await store.pageFailed(deps.db, row.id, 'explore stopped before the page was drawn, and its rows were not kept');
      continue;
    }
    drawLater(deps, { id: row.id, owner: row.owner, key: pageKey(row.id), content, chart: row.chart });
    resumed++;
  }
  return resumed;
}

/**
 * The row once its page is drawn or has failed to be; a 404 if it is gone meanwhile, a 503 with Retry-After when it
 * is still being drawn after SVC_DASHBOARD_PAGE_WAIT_MS.
 */
export async function pageSettled(deps: PageWait, id: string, row: store.DashboardRow): Promise<store.DashboardRow> {
  const deadline = Date.now() + deps.config.DASHBOARD_PAGE_WAIT_MS;
  let d: store.DashboardRow | undefined = row;
  while (d && d.page_state === 'drawing') {
    const left = deadline - Date.now();
    if (left <= 0)
      throw unavailable(`The page of dashboard '${id}' is still being drawn: open it again in a moment.`, { 'Retry-After': '1' });
    const here = deps.drawings.get(id);
    await (here ? Promise.race([here, sleep(left)]) : sleep(Math.min(POLL_MS, left)));
    d = await store.findDashboard(deps.db, id);
  }
  if (!d) throw notFound(`Dashboard '${id}' does not exist.`);
  return d;
}

/** The row of a dashboard whose page is stored, waiting for one being drawn; a page that could not be drawn is a 409. */
export async function readyPage(deps: PageWait, id: string, row: store.DashboardRow): Promise<store.DashboardRow> {
  const d = await pageSettled(deps, id, row);
  if (d.page_state === 'failed')
    throw conflict(
      `The page of dashboard '${id}' could not be drawn (${d.page_error ?? 'no reason recorded'}); nothing of it was stored. Its owner draws it again by changing its chart (PUT /dashboards/${id}/chart), or asks the question again.`,
    );
  return d;
}
