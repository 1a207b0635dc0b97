import { escapeHtml } from '../../platform/web/pages.ts';
import { isTemporal, type ChartSpec, type Column } from './chart.ts';

// A chart drawn at publish, into the signed page, by ECharts' server-side renderer (SVG): the page stays script-free
// and looks the same wherever it is opened. ECharts' SVG carries what DASHBOARD_CSP refuses (style attributes on
// text, a <style> element of hover rules), so safeSvg() keeps only presentation attributes: nothing that needs the
// policy widened. ECharts is loaded on the first chart, not when explore starts.
export const MAX_CHART_POINTS = 1000;
const WIDTH = 720;
const HEIGHT = 360;
// The dashboard page's own palette (DASHBOARD_STYLE): its text colour and one accent.
const TEXT = '#1d2733';
const ACCENT = '#2f6fae';

type ECharts = typeof import('echarts/core');
let loaded: Promise<ECharts> | undefined;
async function loadECharts(): Promise<ECharts> {
  const [core, charts, components, renderers] = await Promise.all([
    import('echarts/core'),
    import('echarts/charts'),
    import('echarts/components'),
    import('echarts/renderers'),
  ]);
  core.use([charts.BarChart, charts.LineChart, charts.ScatterChart, components.GridComponent, renderers.SVGRenderer]);
  return core;
}

const number = (v: unknown): number | null => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  return Number.isFinite(n) ? n : null;
};
const text = (v: unknown) => (v === null || v === undefined ? '' : String(v));

/** The ECharts option of a chart over rows (at most MAX_CHART_POINTS of them). */
export function chartOption(chart: ChartSpec, columns: Column[], rows: unknown[][]): Record<string, unknown> | undefined {
  if (chart.type === 'table') return undefined;
  const xi = columns.findIndex((c) => c.name === chart.x);
  const yi = columns.findIndex((c) => c.name === chart.y);
  if (xi < 0 || yi < 0) return undefined;
  const shown = rows.slice(0, MAX_CHART_POINTS);
  const axisName = (name: string) => ({ name, nameLocation: 'middle', nameGap: 32, nameTextStyle: { color: TEXT } });
  const base = { animation: false, color: [ACCENT], textStyle: { color: TEXT }, grid: { left: 72, right: 24, top: 24, bottom: 56 } };
  const y = { type: 'value', ...axisName(chart.y!), nameGap: 56 };
  if (chart.type === 'scatter') {
    const data = shown.map((r) => [number(r[xi]), number(r[yi])]).filter((p) => p[0] !== null && p[1] !== null);
    return {
      ...base,
      xAxis: { type: 'value', scale: true, ...axisName(chart.x!) },
      yAxis: { ...y, scale: true },
      series: [{ type: 'scatter', data, symbolSize: 6 }],
    };
  }
  if (chart.type === 'line' && isTemporal(columns[xi]!.type)) {
    const data = shown.map((r) => [text(r[xi]), number(r[yi])]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    return {
      ...base,
      xAxis: { type: 'time', ...axisName(chart.x!) },
      yAxis: y,
      series: [{ type: 'line', data, showSymbol: data.length <= 50 }],
    };
  }
  return {
    ...base,
    xAxis: { type: 'category', data: shown.map((r) => text(r[xi])), ...axisName(chart.x!) },
    yAxis: y,
    series: [{ type: chart.type, data: shown.map((r) => number(r[yi])) }],
  };
}

/** The chart as SVG markup for the page, or '' for a table (or a chart whose columns are not in the result). */
export async function renderChartSvg(chart: ChartSpec, columns: Column[], rows: unknown[][]): Promise<string> {
  const option = chartOption(chart, columns, rows);
  if (!option) return '';
  const echarts = await (loaded ??= loadECharts());
  const instance = echarts.init(null, null, { renderer: 'svg', ssr: true, width: WIDTH, height: HEIGHT });
  try {
    instance.setOption(option);
    const label = `${chart.type} chart of ${chart.y} by ${chart.x}${rows.length > MAX_CHART_POINTS ? `, first ${MAX_CHART_POINTS} rows` : ''}`;
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
 * attributes removed, and a role and label for screen readers on the root.
 */
export function safeSvg(svg: string, label: string): string {
  return svg
    .replace(/<style\b[^>]*>[\s\S]*?<\/style>/g, '')
    .replace(/\sstyle="([^"]*)"/g, (_, css: string) =>
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
    .replace(/^<svg\b/, `<svg role="img" aria-label="${escapeHtml(label)}"`)
    .replace(/\n+/g, '\n');
}
