// @ts-check
// Which chart fits a result, by its columns: the console's copy of proposeChart in src/explore/dashboards/chart.ts
// (the service proposes the same when POST /query names no chart); tests/unit/explore-charts.test.ts holds both to
// one table. No DOM here, so the test can import it.

/** @typedef {{ type: 'bar' | 'line' | 'scatter' | 'table', x?: string, y?: string }} ChartSpec */
/** @typedef {{ name: string, type: string }} Column */

/** @param {string} type */
export const isNumeric = (type) => /^(tinyint|smallint|integer|bigint|real|double|decimal.*|numeric.*)$/i.test(type);
/** @param {string} type */
export const isTemporal = (type) => /^(date|timestamp.*|time.*)$/i.test(type);

/**
 * A date or time column and a numeric one: a line over time; a label and a numeric: bars; two numerics: a scatter;
 * anything else: the table.
 * @param {Column[]} columns
 * @returns {ChartSpec}
 */
export function proposeChart(columns) {
  const numeric = columns.filter((c) => isNumeric(c.type));
  const time = columns.find((c) => isTemporal(c.type));
  const label = columns.find((c) => !isNumeric(c.type) && !isTemporal(c.type));
  const value = numeric[0];
  if (time && value) return { type: 'line', x: time.name, y: value.name };
  if (label && value) return { type: 'bar', x: label.name, y: value.name };
  if (numeric.length >= 2) return { type: 'scatter', x: numeric[0]?.name, y: numeric[1]?.name };
  return { type: 'table' };
}

/** @param {unknown} v */
const number = (v) => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  return Number.isFinite(n) ? n : null;
};
/** @param {unknown} v */
const text = (v) => (v === null || v === undefined ? '' : String(v));

/**
 * The ECharts option of a chart over rows, for the console and for the page the service draws
 * (dashboards/chart-draw.mjs), in the colours given; undefined for a table. Without `muted` and `rule` (the page's
 * case) the axes keep ECharts' own colours.
 * @param {ChartSpec} chart
 * @param {Column[]} columns
 * @param {unknown[][]} rows
 * @param {{ fg: string, accent: string, muted?: string, rule?: string }} colours
 * @returns {Record<string, unknown> | undefined}
 */
export function chartOption(chart, columns, rows, colours) {
  if (chart.type === 'table' || !chart.x || !chart.y) return undefined;
  const xi = columns.findIndex((c) => c.name === chart.x);
  const yi = columns.findIndex((c) => c.name === chart.y);
  const xColumn = columns[xi];
  if (!xColumn || yi < 0) return undefined;
  /** @param {string} name */
  const axis = (name) => ({
    name,
    nameLocation: 'middle',
    nameGap: 32,
    nameTextStyle: { color: colours.fg },
    ...(colours.muted ? { axisLabel: { color: colours.muted }, axisLine: { lineStyle: { color: colours.muted } } } : {}),
    ...(colours.rule ? { splitLine: { lineStyle: { color: colours.rule } } } : {}),
  });
  const base = {
    animation: false,
    color: [colours.accent],
    textStyle: { color: colours.fg },
    grid: { left: 72, right: 24, top: 24, bottom: 56 },
  };
  const y = { type: 'value', ...axis(chart.y), nameGap: 56 };
  if (chart.type === 'scatter') {
    const data = rows.map((r) => [number(r[xi]), number(r[yi])]).filter((p) => p[0] !== null && p[1] !== null);
    return {
      ...base,
      xAxis: { type: 'value', scale: true, ...axis(chart.x) },
      yAxis: { ...y, scale: true },
      series: [{ type: 'scatter', data, symbolSize: 6 }],
    };
  }
  if (chart.type === 'line' && isTemporal(xColumn.type)) {
    const data = rows.map((r) => [text(r[xi]), number(r[yi])]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    return {
      ...base,
      xAxis: { type: 'time', ...axis(chart.x) },
      yAxis: y,
      series: [{ type: 'line', data, showSymbol: data.length <= 50 }],
    };
  }
  return {
    ...base,
    xAxis: { type: 'category', data: rows.map((r) => text(r[xi])), ...axis(chart.x) },
    yAxis: y,
    series: [{ type: chart.type, data: rows.map((r) => number(r[yi])) }],
  };
}
