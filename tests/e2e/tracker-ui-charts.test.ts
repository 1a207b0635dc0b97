import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { trackerUi } from '../support/tracker-ui.ts';

// The tracker UI's metric charts (x axis, smoothing, log scale, zoom) and artifact previews (images, JSON, CSV and
// TSV), in headless Chromium against metrics and files written through the REST API as a client writes them.

const T0 = Date.UTC(2026, 10, 1, 9, 0, 0);
const MINUTE = 60_000;
const seeded = { a: '', b: '', aArtifacts: '' };

// a: loss at steps 0..4 a minute apart from 09:00, lr falling a decade a step; b: loss at steps 0..2 from 09:30
const LOSS_A = [0.9, 0.7, 0.55, 0.5, 0.48];
const LOSS_B = [0.8, 0.4, 0.3];
const LR = [1, 0.1, 0.01, 0.001];

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="2"><script>window.__svg = 1</script><rect width="4" height="2" fill="red"/></svg>';
const JSON_TEXT = '{"model":"tree","depth":[3,5],"scores":{"auc":0.91}}';
const CSV_ROWS = ['name,score', '"Smith, J",0.5', '"say ""hi""",1', ...Array.from({ length: 150 }, (_, i) => `row ${i},${i}`)];
const TSV = 'feature\tweight\nage\t0.4\ntenure\t0.6\n';

const ui = trackerUi(async ({ call, url }) => {
  const experimentId = (await call('POST', 'experiments/create', { name: 'charts' })).experiment_id;
  const metrics = (key: string, values: number[], start: number) =>
    values.map((value, step) => ({ key, value, step, timestamp: start + step * MINUTE }));
  for (const [name, batch, start] of [
    ['a', [...metrics('loss', LOSS_A, T0), ...metrics('lr', LR, T0)], T0],
    ['b', metrics('loss', LOSS_B, T0 + 30 * MINUTE), T0 + 30 * MINUTE],
  ] as const) {
    const { run } = await call('POST', 'runs/create', { experiment_id: experimentId, run_name: name, start_time: start });
    seeded[name] = run.info.run_id;
    if (name === 'a') seeded.aArtifacts = run.info.artifact_uri;
    await call('POST', 'runs/log-batch', { run_id: run.info.run_id, metrics: batch });
  }
  // the files go in through the artifact proxy, as the client uploads them
  const root = /^mlflow-artifacts:(?:\/\/[^/]*)?\/*(.*)$/.exec(seeded.aArtifacts)![1]!.replace(/\/+$/, '');
  for (const [path, body] of [
    ['plot.png', PNG],
    ['diagram.svg', SVG],
    ['metrics.json', JSON_TEXT],
    ['table.csv', `${CSV_ROWS.join('\r\n')}\r\n`],
    ['weights.tsv', TSV],
  ] as const) {
    const res = await fetch(`${url()}/api/2.0/mlflow-artifacts/artifacts/${root}/${path}`, { method: 'PUT', body });
    if (!res.ok) throw new Error(`upload ${path}: ${res.status} ${await res.text()}`);
  }
});

const chart = (page: Page, metric: string) => page.locator(`#charts figure[data-metric="${metric}"]`);
const axisLabels = (figure: Locator) => figure.locator('.axis-label').allTextContents();
const xTicks = (figure: Locator) => figure.locator('.x-axis text.tick').allTextContents();
const yTicks = (figure: Locator) => figure.locator('.y-axis text.tick').allTextContents();

/** The points of a run's line (or of its unsmoothed values) in SVG coordinates. */
async function coords(figure: Locator, runId: string, kind: 'series' | 'raw' = 'series'): Promise<[number, number][]> {
  const d = (await figure.locator(`.run-series[data-run-id="${runId}"] path.${kind}`).getAttribute('d')) ?? '';
  return [...d.matchAll(/[ML]([\d.-]+),([\d.-]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
}

const hashQuery = (page: Page) => new URLSearchParams(new URL(page.url()).hash.split('?')[1]);

describe('tracker UI: metric charts', () => {
  it('draws the x axis as steps, wall time or relative time, and keeps the choice in the link', async () => {
    const page = await ui.open(`#/compare?runs=${seeded.a},${seeded.b}`);
    const loss = chart(page, 'loss');
    expect(await axisLabels(loss)).toEqual(['step', 'loss']);
    expect(await xTicks(loss)).toEqual(['0', '1', '2', '3', '4']);

    await page.selectOption('#chart-x', 'wall');
    await expect.poll(() => axisLabels(chart(page, 'loss'))).toEqual(['wall time (UTC)', 'loss']);
    expect(await chart(page, 'loss').getAttribute('data-x-axis')).toBe('wall');
    // 09:00 to 09:32 UTC, ticked every ten minutes
    expect(await xTicks(chart(page, 'loss'))).toEqual(['09:00', '09:10', '09:20', '09:30']);
    expect(hashQuery(page).get('x')).toBe('wall');
    // b ran half an hour after a: on the clock its line lies wholly to the right of a's
    const wallA = await coords(chart(page, 'loss'), seeded.a);
    const wallB = await coords(chart(page, 'loss'), seeded.b);
    expect(wallA).toHaveLength(LOSS_A.length);
    expect(wallB).toHaveLength(LOSS_B.length);
    expect(wallB[0]![0]).toBeGreaterThan(wallA.at(-1)![0]);

    await page.selectOption('#chart-x', 'relative');
    await expect.poll(() => axisLabels(chart(page, 'loss'))).toEqual(['relative time (s)', 'loss']);
    expect(await xTicks(chart(page, 'loss'))).toEqual(['0', '50', '100', '150', '200']);
    // from each run's own start, both lines begin at the left edge, and b (2 minutes) ends before a (4 minutes)
    const relA = await coords(chart(page, 'loss'), seeded.a);
    const relB = await coords(chart(page, 'loss'), seeded.b);
    expect(relB[0]![0]).toBe(relA[0]![0]);
    expect(relB.at(-1)![0]).toBeLessThan(relA.at(-1)![0]);

    // the link shows the same chart when opened again
    await page.reload();
    await page.waitForSelector('#view[aria-busy=false] #charts figure');
    expect(await page.inputValue('#chart-x')).toBe('relative');
    expect(await axisLabels(chart(page, 'loss'))).toEqual(['relative time (s)', 'loss']);
    await ui.expectAccessible(page);
  });

  it('smooths the lines with the slider, keeping the values beneath, and draws y on a log scale', async () => {
    const page = await ui.open(`#/compare?runs=${seeded.a},${seeded.b}`);
    const loss = chart(page, 'loss');
    expect(await loss.locator('path.raw').count()).toBe(0);
    await page.focus('#chart-smoothing');
    await page.keyboard.press('End');
    await expect.poll(() => page.textContent('#chart-smoothing-value')).toBe('0.99');
    expect(hashQuery(page).get('smoothing')).toBe('0.99');
    expect(await chart(page, 'loss').locator('path.raw').count()).toBe(2);
    // a falling loss, smoothed, ends above its last value (a smaller y on screen); the first point is the value itself
    const smoothed = await coords(chart(page, 'loss'), seeded.a);
    const raw = await coords(chart(page, 'loss'), seeded.a, 'raw');
    expect(smoothed[0]).toEqual(raw[0]);
    expect(smoothed.at(-1)![1]).toBeLessThan(raw.at(-1)![1]);
    await page.keyboard.press('Home');
    await expect.poll(() => chart(page, 'loss').locator('path.raw').count()).toBe(0);

    // lr falls a decade a step: evenly spaced on a log scale, not on a linear one
    const gaps = (points: [number, number][]) => points.slice(1).map(([, y], i) => y - points[i]![1]);
    const linear = gaps(await coords(chart(page, 'lr'), seeded.a));
    expect(Math.max(...linear) - Math.min(...linear)).toBeGreaterThan(50);
    await page.check('#chart-log');
    await expect.poll(() => chart(page, 'lr').locator('.y-axis').getAttribute('data-scale')).toBe('log');
    expect(await yTicks(chart(page, 'lr'))).toEqual(['0.001', '0.01', '0.1', '1']);
    const logGaps = gaps(await coords(chart(page, 'lr'), seeded.a));
    expect(Math.max(...logGaps) - Math.min(...logGaps)).toBeLessThan(0.5);
    expect(hashQuery(page).get('log')).toBe('1');
  });

  it('zooms the x axis of every chart by dragging across one, and resets the zoom', async () => {
    const page = await ui.open(`#/compare?runs=${seeded.a},${seeded.b}`);
    expect(await page.isDisabled('#zoom-reset')).toBe(true);
    const box = (await chart(page, 'loss').locator('svg.chart').boundingBox())!;
    // the plot spans 64 to 624 of the chart's 640 units: 30% to 70% of the width is steps 0.91 to 2.74 of 0 to 4
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
    await page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2);
    await page.mouse.up();
    await expect.poll(() => xTicks(chart(page, 'loss'))).toEqual(['1', '2']);
    expect(await xTicks(chart(page, 'lr'))).toEqual(['1', '2']); // lr's steps 0 to 3, the same part of them
    expect(hashQuery(page).get('zoom')).toMatch(/^22\.\d+,68\.\d+$/);
    expect(Number(await page.inputValue('#zoom-from'))).toBeGreaterThan(20);

    await page.click('#zoom-reset');
    await expect.poll(() => xTicks(chart(page, 'loss'))).toEqual(['0', '1', '2', '3', '4']);
    expect(hashQuery(page).has('zoom')).toBe(false);
    expect(await page.isDisabled('#zoom-reset')).toBe(true);
  });
});

describe('tracker UI: artifact previews', () => {
  /** Previews a file of run a and waits for the preview of it. */
  async function preview(page: Page, path: string): Promise<Locator> {
    await page.getByLabel(`Preview ${path}`).click();
    await expect.poll(() => page.textContent('#artifact-preview h3')).toBe(path);
    return page.locator('#artifact-preview');
  }
  const naturalWidth = (img: Locator) => img.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth);

  it('shows a PNG and an SVG as images, never the SVG as markup of the page', async () => {
    const page = await ui.open(`#/runs/${seeded.a}`);
    const png = (await preview(page, 'plot.png')).locator('img');
    expect(await png.getAttribute('src')).toMatch(/get-artifact\?.*path=plot\.png/);
    expect(await png.getAttribute('alt')).toBe('plot.png');
    await expect.poll(() => naturalWidth(png)).toBe(1);

    const shown = await preview(page, 'diagram.svg');
    await expect.poll(() => naturalWidth(shown.locator('img'))).toBe(4);
    expect(await shown.locator('svg, script, rect').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __svg?: number }).__svg)).toBeUndefined();
  });

  it('pretty-prints JSON and shows CSV and TSV as tables of their first rows', async () => {
    const page = await ui.open(`#/runs/${seeded.a}`);
    const json = await preview(page, 'metrics.json');
    expect(await json.locator('pre').textContent()).toBe(JSON.stringify(JSON.parse(JSON_TEXT), null, 2));

    const csv = await preview(page, 'table.csv');
    const cells = (table: Locator) =>
      table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    expect(await csv.locator('thead th').allTextContents()).toEqual(['name', 'score']);
    const rows = await cells(csv.locator('table'));
    expect(rows).toHaveLength(100);
    expect(rows.slice(0, 3)).toEqual([
      ['Smith, J', '0.5'],
      ['say "hi"', '1'],
      ['row 0', '0'],
    ]);
    expect(await page.textContent('#preview-rows')).toBe('100 of 152 rows');

    const tsv = await preview(page, 'weights.tsv');
    expect(await tsv.locator('thead th').allTextContents()).toEqual(['feature', 'weight']);
    expect(await cells(tsv.locator('table'))).toEqual([
      ['age', '0.4'],
      ['tenure', '0.6'],
    ]);
    await ui.expectAccessible(page);
  });
});
