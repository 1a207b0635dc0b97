// @ts-check
// The chart panel under the results: the chart that fits the result (chart-fit.js), a type and x/y picker, and
// "Publish chart", which redraws the dashboard's page with it (PUT /dashboards/{id}/chart). ECharts is served from
// its npm package under /ui/vendor/echarts.js and loaded on the first chart; it draws on a canvas, so nothing it
// does needs the page's CSP widened.
import { byId, h } from './dom.js';
import { chartOption, isNumeric, proposeChart } from './chart-fit.js';

/** @typedef {import('./chart-fit.js').ChartSpec} ChartSpec */
/** @typedef {import('./types.ts').QueryResponse} QueryResponse */
/** @typedef {(method: string, path: string, body?: unknown) => Promise<unknown>} Api */

const ECHARTS = './vendor/echarts.js';
/** @type {Promise<any> | undefined} */
let echarts;
/** @type {any} */
let drawn;
/** @type {QueryResponse | undefined} */
let shown;
/** @type {string | null} */
let dashboard = null;

const select = (/** @type {string} */ id) => byId(id, HTMLSelectElement);

/** @returns {ChartSpec} */
function picked() {
  const type = /** @type {ChartSpec['type']} */ (select('chart-type').value);
  return type === 'table' ? { type } : { type, x: select('chart-x').value, y: select('chart-y').value };
}

/** The console's own colours (base.css), so the chart follows the light or dark scheme. */
function colours() {
  const css = getComputedStyle(document.documentElement);
  const v = (/** @type {string} */ name) => css.getPropertyValue(name).trim();
  return { fg: v('--fg'), muted: v('--muted'), rule: v('--rule'), accent: v('--accent') };
}

async function draw() {
  if (!shown) return;
  const chart = picked();
  for (const id of ['chart-x', 'chart-y']) select(id).disabled = chart.type === 'table';
  const option = chartOption(chart, shown.columns, shown.preview_rows, colours());
  const box = byId('chart');
  box.hidden = !option;
  box.setAttribute('aria-label', option ? `${chart.type} chart of ${chart.y} by ${chart.x}` : 'no chart: the table shows the result');
  if (!option) return;
  const lib = await (echarts ??= import(ECHARTS));
  drawn ??= lib.init(box, null, { renderer: 'canvas' });
  drawn.setOption(option, true);
  drawn.resize();
}

/**
 * Shows the chart panel for an answer: the pickers filled with its columns and set to the proposed chart.
 * @param {QueryResponse} answer
 */
export function showChart(answer) {
  shown = answer;
  dashboard = answer.dashboard_id;
  const proposed = proposeChart(answer.columns);
  const names = answer.columns.map((c) => c.name);
  const numeric = answer.columns.filter((c) => isNumeric(c.type)).map((c) => c.name);
  select('chart-x').replaceChildren(...names.map((n) => new Option(n, n)));
  select('chart-y').replaceChildren(...(numeric.length ? numeric : names).map((n) => new Option(n, n)));
  select('chart-type').value = proposed.type;
  if (proposed.x) select('chart-x').value = proposed.x;
  if (proposed.y) select('chart-y').value = proposed.y;
  byId('chart-panel').hidden = answer.columns.length === 0;
  byId('chart-publish').hidden = !dashboard || answer.cached;
  byId('chart-saved').textContent = '';
  void draw();
}

/** Nothing of an earlier answer stays on screen after a failure. */
export function clearChart() {
  shown = undefined;
  byId('chart-panel').hidden = true;
  drawn?.clear();
}

/**
 * @param {Api} api
 * @param {(err: unknown) => void} fail
 */
export function initChart(api, fail) {
  for (const id of ['chart-type', 'chart-x', 'chart-y']) select(id).addEventListener('change', () => void draw());
  addEventListener('resize', () => drawn?.resize());
  byId('chart-publish').addEventListener('click', async () => {
    try {
      await api('PUT', `/dashboards/${dashboard}/chart`, picked());
      byId('chart-saved').replaceChildren(h('span', {}, 'Published to the dashboard.'));
    } catch (err) {
      fail(err);
    }
  });
}
