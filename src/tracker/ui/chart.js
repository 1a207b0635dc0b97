// @ts-check
// A line chart of one metric over steps, drawn as SVG (no library), with its numbers as a table beside it.
import { append, h, svg } from './dom.js';
import { formatNumber } from './format.js';
import { table } from './parts.js';

/** @typedef {{ x: number, t: number, y: number }} Point a step, its timestamp, the value */
/** @typedef {{ id: string, label: string, color: string, points: Point[] }} Series one run's line */

/**
 * Round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten.
 * @param {number} lo
 * @param {number} hi
 */
function ticks(lo, hi, count = 5) {
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => raw <= s * (1 + 1e-9)) ?? 10 * power;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/**
 * [min, max] of the values widened by `margin` of the range (a single value gets a range around it).
 * @param {number[]} values
 * @returns {[number, number]}
 */
function domain(values, margin = 0) {
  const lo = values.reduce((a, b) => Math.min(a, b), Infinity);
  const hi = values.reduce((a, b) => Math.max(a, b), -Infinity);
  if (lo === hi) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    return [lo - pad, hi + pad];
  }
  const pad = (hi - lo) * margin;
  return [lo - pad, hi + pad];
}

let chartSeq = 0;

/**
 * A line chart of one metric over steps, one line per run; points that are not finite break the line.
 * @param {string} key
 * @param {Series[]} series
 */
export function metricChart(key, series) {
  const W = 640;
  const H = 300;
  const m = { top: 16, right: 16, bottom: 44, left: 64 };
  const finite = series.flatMap((s) => s.points.filter((p) => Number.isFinite(p.y)));
  const id = `chart-${++chartSeq}`;
  const figure = h('figure', { dataset: { metric: key } }, h('figcaption', { id: `${id}-title` }, key));
  if (!finite.length) return append(figure, [h('p', { class: 'muted' }, 'No finite values to plot.')]);

  const [x0, x1] = domain(finite.map((p) => p.x));
  const [y0, y1] = domain(
    finite.map((p) => p.y),
    0.05,
  );
  /** @param {number} x */
  const sx = (x) => m.left + ((x - x0) / (x1 - x0)) * (W - m.left - m.right);
  /** @param {number} y */
  const sy = (y) => H - m.bottom - ((y - y0) / (y1 - y0)) * (H - m.top - m.bottom);
  const xt = ticks(x0, x1).filter(Number.isInteger); // steps are whole numbers
  const yt = ticks(y0, y1);
  /** @param {number} v */
  const round = (v) => Math.round(v * 10) / 10;

  const chart = svg(
    'svg',
    { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-title ${id}-desc` },
    svg('desc', { id: `${id}-desc` }, `${key} over steps for ${series.map((s) => s.label).join(', ')}`),
    svg(
      'g',
      { class: 'grid' },
      yt.map((t) => svg('line', { x1: m.left, x2: W - m.right, y1: round(sy(t)), y2: round(sy(t)) })),
    ),
    svg(
      'g',
      { class: 'axis x-axis' },
      svg('line', { x1: m.left, x2: W - m.right, y1: H - m.bottom, y2: H - m.bottom }),
      xt.map((t) =>
        svg(
          'g',
          {},
          svg('line', { x1: round(sx(t)), x2: round(sx(t)), y1: H - m.bottom, y2: H - m.bottom + 4 }),
          svg('text', { x: round(sx(t)), y: H - m.bottom + 16, 'text-anchor': 'middle' }, formatNumber(t)),
        ),
      ),
      svg('text', { class: 'axis-label', x: m.left + (W - m.left - m.right) / 2, y: H - 6, 'text-anchor': 'middle' }, 'step'),
    ),
    svg(
      'g',
      { class: 'axis y-axis' },
      svg('line', { x1: m.left, x2: m.left, y1: m.top, y2: H - m.bottom }),
      yt.map((t) =>
        svg(
          'g',
          {},
          svg('line', { x1: m.left - 4, x2: m.left, y1: round(sy(t)), y2: round(sy(t)) }),
          svg('text', { x: m.left - 7, y: round(sy(t)) + 4, 'text-anchor': 'end' }, formatNumber(t)),
        ),
      ),
      svg(
        'text',
        { class: 'axis-label', transform: `translate(14 ${m.top + (H - m.top - m.bottom) / 2}) rotate(-90)`, 'text-anchor': 'middle' },
        key,
      ),
    ),
    svg(
      'g',
      { class: 'lines' },
      series.map((s) => {
        let d = '';
        let pen = 'M';
        let plotted = 0;
        for (const p of s.points) {
          if (!Number.isFinite(p.y)) {
            pen = 'M';
            continue;
          }
          d += `${pen}${round(sx(p.x))},${round(sy(p.y))} `;
          pen = 'L';
          plotted++;
        }
        return svg(
          'g',
          { class: 'run-series', dataset: { runId: s.id } },
          svg(
            'path',
            { class: 'series', d: d.trim(), stroke: s.color, dataset: { runId: s.id, points: plotted } },
            svg('title', {}, `${s.label}: ${plotted} points`),
          ),
          plotted <= 100
            ? s.points
                .filter((p) => Number.isFinite(p.y))
                .map((p) =>
                  svg(
                    'circle',
                    { cx: round(sx(p.x)), cy: round(sy(p.y)), r: 2.5, fill: s.color },
                    svg('title', {}, `${s.label} · step ${p.x}: ${p.y}`),
                  ),
                )
            : null,
        );
      }),
    ),
  );

  const legend = h(
    'ul',
    { class: 'legend' },
    series.map((s) => {
      const swatch = h('span', { class: 'swatch', 'aria-hidden': 'true' });
      swatch.style.background = s.color; // through the CSSOM, which the page's CSP allows (a style attribute it would not)
      return h('li', {}, swatch, s.label);
    }),
  );
  return append(figure, [chart, legend, chartData(key, series)]);
}

/**
 * The chart's numbers as a table, for screen readers and for copying.
 * @param {string} key
 * @param {Series[]} series
 */
function chartData(key, series) {
  const steps = [...new Set(series.flatMap((s) => s.points.map((p) => p.x)))].sort((a, b) => a - b);
  const last = series.map((s) => new Map(s.points.map((p) => [p.x, p.y])));
  return h(
    'details',
    {},
    h('summary', {}, 'Data'),
    table(
      ['step', ...series.map((s) => s.label)],
      steps.map((x) =>
        h(
          'tr',
          {},
          h('td', { class: 'num' }, x),
          last.map((m) => {
            const y = m.get(x);
            return h('td', { class: 'num' }, y === undefined ? '' : formatNumber(y));
          }),
        ),
      ),
      { 'aria-label': `${key} by step` },
    ),
  );
}
