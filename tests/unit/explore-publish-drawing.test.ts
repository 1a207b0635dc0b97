import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChartDrawer } from '../../src/explore/dashboards/chart-svg.ts';
import { resumeDrawings } from '../../src/explore/dashboards/drawing.ts';
import { contentKey, pageStore } from '../../src/explore/dashboards/page-store.ts';
import { pageKey } from '../../src/platform/dashboard-pages.ts';
import { runtimeHarness, type RuntimeHarness } from '../support/dashboards.ts';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';

// Step 9 stores the dashboard's row at once and draws its page after POST /query has answered (chart worker, then
// render, sign, store). Through HTTP: the runtime, asked for the page right after the answer, serves it once it is
// drawn; a page still being drawn is a 503 with Retry-After, never a 404 or half a page; a drawing that fails is a
// 409 saying why, and stores nothing of the page.
const QUESTION = { question: 'how many customers are there per nation', force: true };
const worker = (name: string) => new URL(`../fixtures/chart-workers/${name}.mjs`, import.meta.url);
const figure = (page: string) => page.match(/<figure>[\s\S]*?<\/figure>/)?.[0];

describe('pages drawn after publish', () => {
  let h: ExploreHarness;
  let runtime: RuntimeHarness;
  const open = (id: string, who = as.analyst) =>
    runtime.app.request(`/d/${id}`, { headers: { 'X-User-Id': who.user, 'X-User-Role': who.role } });
  /** Runs `fn` with explore's charts drawn by another worker, then puts the real one back. */
  const drawnBy = async (name: string, fn: () => Promise<void>) => {
    const real = h.deps.charts;
    const other = createChartDrawer({ worker: worker(name) });
    h.deps.charts = other;
    try {
      await fn();
    } finally {
      h.deps.charts = real;
      await other.close();
      await Promise.allSettled(h.deps.drawings.values());
    }
  };

  beforeAll(async () => {
    h = await exploreHarness();
    runtime = await runtimeHarness(h);
  }, 60_000);
  afterAll(async () => {
    await runtime.close();
    await h.close();
  });

  it('serves a dashboard opened right after POST /query with its chart', async () => {
    const q = await h.ask(as.analyst, QUESTION);
    expect(q.status).toBe(200);
    const res = await open(q.body.dashboard_id);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toMatch(/<figure><svg role="img" aria-label="bar chart of customer by nation"/);
    expect(page).toContain('>ALGERIA</text>');
    expect(page).toContain('<td>ALGERIA</td>');
  });

  it('draws the same rows into the same bytes, whichever process or worker draws them', async () => {
    const [a, b] = [await h.ask(as.analyst, QUESTION), await h.ask(as.analyst, QUESTION)];
    const [pa, pb] = [await (await open(a.body.dashboard_id)).text(), await (await open(b.body.dashboard_id)).text()];
    expect(figure(pa)).toMatch(/^<figure><svg/);
    expect(figure(pa)).toBe(figure(pb));
    // a line chart carries ids (its clip path): the same too, from a new worker
    const line = { ...QUESTION, chart: { type: 'line', x: 'nation', y: 'customer' } };
    const first = await h.ask(as.analyst, line);
    const firstPage = await (await open(first.body.dashboard_id)).text();
    expect(firstPage).toMatch(/clip-path="url\(#zr-/);
    await drawnBy('../../../src/explore/dashboards/chart-worker', async () => {
      const second = await h.ask(as.analyst, line);
      expect(figure(await (await open(second.body.dashboard_id)).text())).toBe(figure(firstPage));
    });
  });

  it('answers POST /query without waiting for the chart; a page still being drawn is a 503 with Retry-After', async () => {
    await drawnBy('silent', async () => {
      const q = await h.ask(as.analyst, QUESTION);
      expect(q.status).toBe(200);
      const res = await open(q.body.dashboard_id);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(((await res.json()) as { detail: string }).detail).toMatch(/is still being drawn: open it again in a moment/);
      // the list shows it meanwhile, as any dashboard
      const mine = await h.call('GET', '/dashboards?scope=mine', as.analyst);
      expect(mine.body.dashboards.map((d: { id: string }) => d.id)).toContain(q.body.dashboard_id);
    });
  }, 60_000);

  it('refuses a page that could not be drawn with why, stores none of it, and its owner draws it again', async () => {
    let id = '';
    await drawnBy('fails', async () => {
      const q = await h.ask(as.analyst, QUESTION);
      expect(q.status).toBe(200);
      id = q.body.dashboard_id;
      const res = await open(id);
      expect(res.status).toBe(409);
      expect(((await res.json()) as { detail: string }).detail).toMatch(
        /could not be drawn \(the chart worker stopped: ECharts could not be loaded \(a test worker that always fails\)\); nothing of it was stored/,
      );
      expect(await h.deps.pages.get(pageKey(id))).toBeNull();
      const launch = await h.call('GET', `/dashboards/${id}/launch`, as.analyst);
      expect(launch.status).toBe(409);
      // whoever may not open it learns nothing of its page
      expect((await h.call('GET', `/dashboards/${id}/launch`, as.user)).body).toEqual({ allow: false, reason: expect.any(String) });
    });
    // a new chart draws the page again, from the rows as published
    const changed = await h.call('PUT', `/dashboards/${id}/chart`, as.analyst, { type: 'bar', x: 'nation', y: 'customer' });
    expect(changed.status).toBe(200);
    const res = await open(id);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/aria-label="bar chart of customer by nation"/);
  });

  it('draws again a page left half-way by a process that stopped, or says why it cannot', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const q = await h.ask(as.analyst, QUESTION);
      expect((await open(q.body.dashboard_id)).status).toBe(200);
      ids.push(q.body.dashboard_id);
    }
    // as a process leaves them when it stops between the answer and the stored page: one with its content stored,
    // one without
    for (const id of ids) {
      await h.db.query(
        `UPDATE explore_dashboards SET page_state = 'drawing', object_key = NULL, digest = NULL, created_at = now() - interval '2 minutes' WHERE id = $1`,
        [id],
      );
      await h.deps.pages.delete(pageKey(id));
    }
    await h.deps.pages.delete(contentKey(ids[1]!));
    expect(await resumeDrawings(pageStore(h.deps))).toBe(1);
    const res = await open(ids[0]!);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/aria-label="bar chart of customer by nation"/);
    const lost = await open(ids[1]!);
    expect(lost.status).toBe(409);
    expect(((await lost.json()) as { detail: string }).detail).toMatch(
      /explore stopped before the page was drawn, and its rows were not kept/,
    );
  });
});
