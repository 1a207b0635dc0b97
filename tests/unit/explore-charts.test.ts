import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proposeChart } from '../../src/explore/dashboards/chart.ts';
import { MAX_PAGE_BYTES } from '../../src/platform/dashboard-pages.ts';
import { verifyDashboard } from '../../src/platform/dashboard-signature.ts';
import { readObject } from '../../src/platform/objects/index.ts';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';

// Charts through HTTP: POST /query's chart, the one proposed when none is given, PUT /dashboards/{id}/chart (its
// owner only), and the chart as the signed page holds it: ECharts' SVG with nothing DASHBOARD_CSP refuses.
type Col = { name: string; type: string };
const FITS: [string, Col[], ReturnType<typeof proposeChart>][] = [
  [
    'a date and a number',
    [
      { name: 'day', type: 'date' },
      { name: 'n', type: 'bigint' },
    ],
    { type: 'line', x: 'day', y: 'n' },
  ],
  [
    'a label and a number',
    [
      { name: 'nation', type: 'varchar' },
      { name: 'n', type: 'bigint' },
    ],
    { type: 'bar', x: 'nation', y: 'n' },
  ],
  [
    'a time, a label and a number',
    [
      { name: 'k', type: 'varchar' },
      { name: 't', type: 'timestamp(3)' },
      { name: 'v', type: 'decimal(12,2)' },
    ],
    { type: 'line', x: 't', y: 'v' },
  ],
  [
    'two numbers',
    [
      { name: 'a', type: 'double' },
      { name: 'b', type: 'integer' },
    ],
    { type: 'scatter', x: 'a', y: 'b' },
  ],
  ['one number', [{ name: 'n', type: 'bigint' }], { type: 'table' }],
  [
    'labels only',
    [
      { name: 'a', type: 'varchar' },
      { name: 'b', type: 'char' },
    ],
    { type: 'table' },
  ],
];

describe('chart proposal', () => {
  it.each(FITS)('%s: the service and the console propose the same chart', async (_, columns, expected) => {
    expect(proposeChart(columns)).toEqual(expected);
    const console = (await import(new URL('../../src/explore/console/chart-fit.js', import.meta.url).href)) as {
      proposeChart: typeof proposeChart;
    };
    expect(console.proposeChart(columns)).toEqual(expected);
  });
});

describe('dashboard charts', () => {
  let h: ExploreHarness;
  let perNation: string;
  // where the page is, as the runtime learns it: the launch answer waits for a page still being drawn after publish
  const launchOf = async (id: string) => {
    const launch = await h.call('GET', `/dashboards/${id}/launch`, as.analyst);
    expect(launch.status).toBe(200);
    return launch.body as { object_key: string; owner: string };
  };
  const pageOf = async (id: string) => {
    const row = await launchOf(id);
    const text = (await readObject(h.deps.pages, row.object_key, MAX_PAGE_BYTES))!.toString('utf8');
    const verified = verifyDashboard(text, { current: 'test-key' }, { id, owner: row.owner });
    expect(verified.ok).toBe(true);
    return verified.ok ? verified.body : '';
  };
  const chartOf = async (id: string) =>
    ((await h.call('GET', '/dashboards?scope=mine', as.analyst)).body.dashboards as { id: string; chart: unknown; cards: number }[]).find(
      (d) => d.id === id,
    );

  beforeAll(async () => {
    h = await exploreHarness();
    const q = await h.ask(as.analyst, { question: 'how many customers are there per nation', force: true });
    expect(q.status).toBe(200);
    perNation = q.body.dashboard_id;
  }, 60_000);
  afterAll(() => h.close());

  it('publishes the proposed chart when none is asked for, as SVG the page policy admits', async () => {
    expect(await chartOf(perNation)).toMatchObject({ chart: { type: 'bar', x: 'nation', y: 'customer' }, cards: 0 });
    const page = await pageOf(perNation);
    expect(page).toMatch(/<figure><svg role="img" aria-label="bar chart of customer by nation"/);
    expect(page).toContain('>ALGERIA</text>');
    // one inline stylesheet (the page's, by hash); no style attribute, script or class from ECharts
    expect(page.match(/<style\b/g)).toHaveLength(1);
    expect(page).not.toMatch(/\sstyle=|<script|\son[a-z]+=|ecmeta_|\sclass="zr/i);
  });

  it('publishes the chart POST /query asks for', async () => {
    const q = await h.ask(as.analyst, { question: 'how many customers are there per nation', force: true, chart: { type: 'table' } });
    expect(q.status).toBe(200);
    expect(await chartOf(q.body.dashboard_id)).toMatchObject({ chart: { type: 'table' } });
    expect(await pageOf(q.body.dashboard_id)).not.toContain('<svg');
  });

  it.each([
    [{ type: 'pie', x: 'nation', y: 'customer' }, 'json.chart.type'],
    [{ type: 'bar', y: 'customer' }, 'json.chart.x'],
    [{ type: 'line', x: 'nation' }, 'json.chart.y'],
    [{ type: 'scatter', x: '', y: 'customer' }, 'json.chart.x'],
  ])('refuses the chart %j with 400 naming %s', async (chart, location) => {
    const q = await h.ask(as.analyst, { question: 'how many customers are there per nation', force: true, chart });
    expect(q.status).toBe(400);
    expect(q.body.errors.map((e: { location: string }) => e.location)).toContain(location);
  });

  it.each([
    [{ type: 'bar', x: 'nationx', y: 'customer' }, /x column 'nationx' is not a column of the result/],
    [{ type: 'bar', x: 'customer', y: 'nation' }, /plots numbers: column 'nation' is varchar/],
    [{ type: 'scatter', x: 'nation', y: 'customer' }, /plots numbers: column 'nation'/],
  ])('refuses the chart %j of columns the result cannot draw with 422', async (chart, detail) => {
    const q = await h.ask(as.analyst, { question: 'how many customers are there per nation', force: true, chart });
    expect(q.status).toBe(422);
    expect(q.body.detail).toMatch(detail);
  });

  it('lets the owner change the chart: the page is drawn again from the published rows and signed again', async () => {
    const before = await launchOf(perNation);
    const res = await h.call('PUT', `/dashboards/${perNation}/chart`, as.analyst, { type: 'line', x: 'nation', y: 'customer' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: perNation, chart: { type: 'line', x: 'nation', y: 'customer' }, cards: 0 });
    const page = await pageOf(perNation);
    expect(page).toMatch(/aria-label="line chart of customer by nation"/);
    expect(page).toContain('>ALGERIA</text>');
    // the previous page is gone from the store once the row names the new one
    expect(await h.deps.pages.get(before.object_key)).toBeNull();
    const table = await h.call('PUT', `/dashboards/${perNation}/chart`, as.analyst, { type: 'table' });
    expect(table.body.chart).toEqual({ type: 'table' });
    expect(await pageOf(perNation)).not.toContain('<svg');
    expect(await pageOf(perNation)).toContain('<td>ALGERIA</td>');
  });

  it('answers 404 to anyone but the owner, even one who may open the dashboard, and changes nothing', async () => {
    await h.call('PATCH', `/dashboards/${perNation}/share`, as.analyst, { visibility: 'public' });
    const chart = (await chartOf(perNation))!.chart;
    for (const who of [as.admin, as.analyst2, as.user, as.viewer]) {
      const res = await h.call('PUT', `/dashboards/${perNation}/chart`, who, { type: 'bar', x: 'nation', y: 'customer' });
      expect(res.status).toBe(404);
    }
    expect((await h.call('PUT', '/dashboards/no-such-dashboard/chart', as.analyst, { type: 'table' })).status).toBe(404);
    expect((await chartOf(perNation))!.chart).toEqual(chart);
  });

  it('refuses a chart of columns the dashboard does not have (422) and a malformed one (400)', async () => {
    const wrong = await h.call('PUT', `/dashboards/${perNation}/chart`, as.analyst, { type: 'bar', x: 'region', y: 'customer' });
    expect(wrong.status).toBe(422);
    expect(wrong.body.detail).toMatch(/'region' is not a column of the result \(nation, customer\)/);
    const malformed = await h.call('PUT', `/dashboards/${perNation}/chart`, as.analyst, { type: 'bar' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors.map((e: { location: string }) => e.location).sort()).toEqual(['json.x', 'json.y']);
  });
});
