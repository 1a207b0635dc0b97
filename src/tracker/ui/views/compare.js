// @ts-check
// Runs side by side: their facts, parameters and latest metrics (rows that differ marked), and a chart per metric,
// all drawn with the same options (chart-controls.js), redrawn in place when they change.
import { api } from '../api.js';
import { metricChart } from '../chart.js';
import { chartControls, chartOptions } from '../chart-controls.js';
import { h } from '../dom.js';
import { byKey, formatNumber, formatTime, num, runName } from '../format.js';
import { link, section, table } from '../parts.js';

/** @typedef {import('../types.ts').Run} Run */
/** @typedef {import('../types.ts').KeyValue} KeyValue */
/** @typedef {import('../types.ts').Metric} Metric */
/** @typedef {import('../chart.js').Point} Point */

const COLORS = ['#2f6fae', '#d9534f', '#3c9d5d', '#e08a1e', '#7b4fb3', '#1a9ea8', '#b5466b', '#6b7480'];

/**
 * @param {string[]} runIds
 * @param {URLSearchParams} query the chart options (chart-controls.js)
 */
export async function compareView(runIds, query) {
  if (!runIds.length) return section('Compare runs', h('p', { class: 'muted' }, "Select runs in an experiment's runs table first."));
  const runs = await Promise.all(runIds.map((id) => api('GET', 'runs/get', { run_id: id }).then((r) => r.run)));
  const colors = new Map(runs.map((r, i) => [r.info.run_id, COLORS[i % COLORS.length] ?? '']));
  const experiments = new Map(
    await Promise.all(
      [...new Set(runs.map((r) => r.info.experiment_id))].map((id) =>
        api('GET', 'experiments/get', { experiment_id: id }).then(
          (e) => /** @type {const} */ ([id, e.experiment.name]),
          () => /** @type {const} */ ([id, id]),
        ),
      ),
    ),
  );
  // A fresh header per table: a DOM node lives in one place only.
  const header = () => [
    h('td', {}),
    runs.map((r) => h('th', { scope: 'col' }, link(`#/runs/${encodeURIComponent(r.info.run_id)}`, runName(r)))),
  ];

  /**
   * @template {KeyValue | Metric} T
   * @param {string} label
   * @param {string} id
   * @param {(run: Run) => T[] | undefined} pick
   * @param {(value: T['value']) => string} format
   */
  const side = (label, id, pick, format) => {
    const keys = [...new Set(runs.flatMap((r) => (pick(r) ?? []).map((i) => i.key)))].sort();
    if (!keys.length) return section(label, h('p', { class: 'muted' }, `No ${label.toLowerCase()}.`));
    const rows = keys.map((k) => {
      const values = runs.map((r) => byKey(pick(r)).get(k)?.value);
      const differs = new Set(values.map((v) => (v === undefined ? '' : String(v)))).size > 1;
      return h(
        'tr',
        { class: differs ? 'differs' : null },
        h('th', { scope: 'row' }, k, differs ? h('span', { class: 'muted' }, ' (differs)') : null),
        values.map((v) => h('td', { class: format === formatNumber ? 'num' : null }, v === undefined ? '' : format(v))),
      );
    });
    return section(label, table(header(), rows, { id, class: 'wide' }));
  };

  const metricKeys = [...new Set(runs.flatMap((r) => (r.data?.metrics ?? []).map((m) => m.key)))].sort();
  const allSeries = await Promise.all(
    metricKeys.map(async (key) => {
      const withKey = runs.filter((r) => byKey(r.data?.metrics).has(key));
      const points = await chartPoints(
        withKey.map((r) => r.info.run_id),
        key,
      );
      const series = withKey.map((r) => ({
        id: r.info.run_id,
        label: runName(r),
        color: colors.get(r.info.run_id) ?? '',
        points: (points.get(r.info.run_id) ?? []).sort((a, b) => a.x - b.x || a.t - b.t),
      }));
      return /** @type {const} */ ([key, series]);
    }),
  );
  const charts = h('div', { class: 'charts', id: 'charts' });
  /** @param {import('../chart.js').ChartOptions} options */
  const draw = (options) =>
    charts.replaceChildren(...allSeries.map(([key, series]) => metricChart(key, series, { ...options, onZoom: controls.zoomTo })));
  const controls = chartControls(chartOptions(query), draw);
  draw(chartOptions(query));

  return h(
    'div',
    {},
    section(
      `Compare ${runs.length} run${runs.length === 1 ? '' : 's'}`,
      table(
        header(),
        [
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, 'Experiment'),
            runs.map((r) =>
              h('td', {}, link(`#/experiments/${encodeURIComponent(r.info.experiment_id)}`, experiments.get(r.info.experiment_id))),
            ),
          ),
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, 'Status'),
            runs.map((r) => h('td', {}, r.info.status)),
          ),
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, 'Started'),
            runs.map((r) => h('td', {}, formatTime(r.info.start_time))),
          ),
        ],
        { class: 'wide', id: 'compare-runs' },
      ),
    ),
    h(
      'div',
      { class: 'grid2' },
      side('Parameters', 'compare-params', (r) => r.data?.params, String),
      side('Metrics', 'compare-metrics', (r) => r.data?.metrics, formatNumber),
    ),
    section('Metric charts', metricKeys.length ? [controls.form, charts] : h('p', { class: 'muted' }, 'No metrics.')),
  );
}

/**
 * One metric's points for many runs in one request per hundred runs (the server's bound), sampled by the server to
 * at most CHART_POINTS per run, first and last kept: a run with a million steps still draws from a small answer.
 */
const CHART_POINTS = 1000;

/**
 * @param {string[]} runIds
 * @param {string} key
 * @returns {Promise<Map<string, Point[]>>}
 */
async function chartPoints(runIds, key) {
  /** @type {Map<string, Point[]>} */
  const byRun = new Map();
  for (let i = 0; i < runIds.length; i += 100) {
    const page = await api('GET', 'metrics/get-history-bulk-interval', {
      run_ids: runIds.slice(i, i + 100),
      metric_key: key,
      max_results: CHART_POINTS,
    });
    for (const m of page.metrics ?? []) {
      const runId = m.run_id ?? '';
      const points = byRun.get(runId) ?? [];
      byRun.set(runId, points);
      points.push({ x: num(m.step ?? 0), t: num(m.timestamp ?? 0), y: num(m.value) });
    }
  }
  return byRun;
}
