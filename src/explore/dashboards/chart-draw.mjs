// A chart drawn into the signed page by ECharts' server-side renderer (SVG): the page stays script-free and looks the
// same wherever it is opened. Plain JavaScript so that the chart worker (chart-worker.mjs) runs it under Node, tsx
// and vitest alike. ECharts' SVG carries what DASHBOARD_CSP refuses (style attributes on text, a <style> element of
// hover rules), so safeSvg() keeps only presentation attributes: nothing that needs the policy widened.
import { chartOption as consoleChartOption } from '../console/chart-fit.js';

export const MAX_CHART_POINTS = 1000;
const WIDTH = 720;
const HEIGHT = 360;
// The dashboard page's own palette (DASHBOARD_STYLE): its text colour and one accent.
const TEXT = '#1d2733';
const ACCENT = '#2f6fae';

/** @param {unknown} value */
const escapeHtml = (value) =>
  String(value ?? '').replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);

// Only the parts a page's chart uses, each from its own module: the worker's first chart loads half as much code as
// through echarts/charts and echarts/components (which import every chart and component), and draws the same.
/** @type {Promise<typeof import('echarts/core')> | undefined} */
let loaded;
/** Loads ECharts (once): the chart worker does so as it starts. */
export const loadCharts = () => (loaded ??= loadECharts());
async function loadECharts() {
  const [core, ...parts] = await Promise.all([
    import('echarts/core'),
    import('echarts/lib/chart/bar/install.js'),
    import('echarts/lib/chart/line/install.js'),
    import('echarts/lib/chart/scatter/install.js'),
    import('echarts/lib/component/grid/install.js'),
    import('echarts/lib/renderer/installSVGRenderer.js'),
  ]);
  core.use(parts.map((part) => part.install));
  return core;
}

/**
 * The ECharts option of a page's chart over rows (at most MAX_CHART_POINTS of them): the console's own option
 * (console/chart-fit.js), in the page's palette, so the console's chart and the page's are drawn alike.
 * @param {import('./chart-draw.d.mts').ChartSpec} chart
 * @param {import('./chart-draw.d.mts').Column[]} columns
 * @param {unknown[][]} rows
 * @returns {Record<string, unknown> | undefined}
 */
export const chartOption = (chart, columns, rows) =>
  consoleChartOption(chart, columns, rows.slice(0, MAX_CHART_POINTS), { fg: TEXT, accent: ACCENT });

/**
 * The chart as SVG markup for the page, or '' for a table (or a chart whose columns are not in the result).
 * @param {import('./chart-draw.d.mts').ChartSpec} chart
 * @param {import('./chart-draw.d.mts').Column[]} columns
 * @param {unknown[][]} rows
 * @param {number} [total] how many rows the result has, when only the first MAX_CHART_POINTS were passed
 * @returns {Promise<string>}
 */
export async function drawChart(chart, columns, rows, total = rows.length) {
  const option = chartOption(chart, columns, rows);
  if (!option) return '';
  const echarts = await loadCharts();
  const instance = echarts.init(null, null, { renderer: 'svg', ssr: true, width: WIDTH, height: HEIGHT });
  try {
    instance.setOption(option);
    const label = `${chart.type} chart of ${chart.y} by ${chart.x}${total > MAX_CHART_POINTS ? `, first ${MAX_CHART_POINTS} rows` : ''}`;
    return safeSvg(instance.renderToSVGString(), label);
  } finally {
    instance.dispose();
  }
}

// The SVG presentation attributes a style declaration of ECharts may become; any other declaration is dropped.
const PRESENTATION = new Set([
  'fill',
  'fill-opacity',
  'stroke',
  'stroke-width',
  'stroke-opacity',
  'stroke-dasharray',
  'opacity',
  'font-size',
  'font-family',
  'font-weight',
  'font-style',
  'text-anchor',
  'dominant-baseline',
]);
const SAFE_VALUE = /^[#\w\s.,%()'-]{1,200}$/;

/**
 * ECharts' SVG as a DASHBOARD_CSP page accepts it: its <style> element removed (hover rules, for a page no one hovers
 * into life), each style attribute turned into the presentation attributes it sets, ECharts' metadata and class
 * attributes removed, and a role and label for screen readers on the root. ECharts numbers each instance it makes
 * (the `zr3-` of a clip path's id), so the number is dropped: the same rows give the same bytes in any process.
 * @param {string} svg
 * @param {string} label
 */
export function safeSvg(svg, label) {
  return svg
    .replace(/<style\b[^>]*>[\s\S]*?<\/style>/g, '')
    .replace(/\sstyle="([^"]*)"/g, (_, /** @type {string} */ css) =>
      css
        .split(';')
        .map((decl) => {
          const at = decl.indexOf(':');
          const [name, value] = [decl.slice(0, at).trim().toLowerCase(), decl.slice(at + 1).trim()];
          return at > 0 && PRESENTATION.has(name) && SAFE_VALUE.test(value) ? ` ${name}="${escapeHtml(value)}"` : '';
        })
        .join(''),
    )
    .replace(/\s(ecmeta_[a-z_]+|class)="[^"]*"/g, '')
    .replace(/\bzr\d+-/g, 'zr-')
    .replace(/^<svg\b/, `<svg role="img" aria-label="${escapeHtml(label)}"`)
    .replace(/\n+/g, '\n');
}
