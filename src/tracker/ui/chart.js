// @ts-check
// A line chart of one metric, drawn as SVG (no library), with its numbers as a table beside it. The x axis is the
// step, the wall-clock time or the time since the run's first value; the line may be smoothed, the y axis
// logarithmic, and the x axis zoomed (dragging across the chart, or the controls of chart-controls.js).
import { append, h, svg } from './dom.js';
import { domain, formatX, logTicks, smooth, ticks, timeTicks } from './chart-scale.js';
import { formatNumber, formatTime } from './format.js';
import { table } from './parts.js';

/** @typedef {{ x: number, t: number, y: number }} Point a step, its timestamp, the value */
/** @typedef {{ id: string, label: string, color: string, points: Point[] }} Series one run's line */
/** @typedef {'step' | 'wall' | 'relative'} XAxis */
/**
 * How the charts are drawn: `zoom` is the part of the x axis shown, in percent of its whole.
 * @typedef {{ x: XAxis, smoothing: number, log: boolean, zoom: [number, number], onZoom?: (from: number, to: number) => void }} ChartOptions
 */

/** @type {ChartOptions} */
export const DEFAULT_OPTIONS = { x: 'step', smoothing: 0, log: false, zoom: [0, 100] };

/** What each x axis is called on the chart and in its table. */
export const AXIS_LABELS = { step: 'step', wall: 'wall time (UTC)', relative: 'relative time (s)' };

const W = 640;
const H = 300;
const M = { top: 16, right: 16, bottom: 44, left: 64 };
/** @param {number} v */
const round = (v) => Math.round(v * 10) / 10;

let chartSeq = 0;

/** @typedef {{ x: number, raw: number, y: number }} Placed a point on the chosen x axis, its value and its smoothed value */

/**
 * A series' points on the chosen x axis, in order, with their smoothed values.
 * @param {Series} s
 * @param {ChartOptions} options
 * @returns {Placed[]}
 */
function place(s, options) {
  const t0 = s.points.reduce((a, p) => Math.min(a, p.t), Infinity);
  const xOf = (/** @type {Point} */ p) => (options.x === 'step' ? p.x : options.x === 'wall' ? p.t : (p.t - t0) / 1000);
  const points = s.points.map((p) => ({ x: xOf(p), raw: p.y })).sort((a, b) => a.x - b.x);
  const smoothed = smooth(
    points.map((p) => p.raw),
    options.smoothing,
  );
  return points.map((p, i) => ({ ...p, y: smoothed[i] ?? p.raw }));
}

/**
 * A line chart of one metric, one line per run; points that are not finite (or not positive on a log scale) break
 * the line.
 * @param {string} key
 * @param {Series[]} series
 * @param {ChartOptions} [options]
 */
export function metricChart(key, series, options = DEFAULT_OPTIONS) {
  const id = `chart-${++chartSeq}`;
  const axis = options.x;
  const smoothed = options.smoothing > 0;
  const figure = h('figure', { dataset: { metric: key, xAxis: axis } }, h('figcaption', { id: `${id}-title` }, key));
  /** @param {number} y */
  const onScale = (y) => Number.isFinite(y) && (!options.log || y > 0);
  /** @param {number} y */
  const ty = (y) => (options.log ? Math.log10(y) : y);
  const lines = series.map((s) => ({ s, points: place(s, options) }));
  const all = lines.flatMap((l) => l.points.filter((p) => onScale(p.y)));
  if (!all.length)
    return append(figure, [
      h('p', { class: 'muted' }, options.log ? 'No positive values to plot on a log scale.' : 'No finite values to plot.'),
    ]);

  const [fx0, fx1] = domain(
    all.map((p) => p.x),
    0,
    axis === 'wall' ? 1000 : undefined,
  );
  const [zoomFrom, zoomTo] = options.zoom;
  const x0 = fx0 + ((fx1 - fx0) * zoomFrom) / 100;
  const x1 = fx0 + ((fx1 - fx0) * zoomTo) / 100;
  const inView = all.filter((p) => p.x >= x0 && p.x <= x1);
  const yValues = (inView.length ? inView : all).flatMap((p) => (smoothed && onScale(p.raw) ? [p.y, p.raw] : [p.y]));
  const [y0, y1] = domain(yValues.map(ty), 0.05);
  /** @param {number} x */
  const sx = (x) => M.left + ((x - x0) / (x1 - x0)) * (W - M.left - M.right);
  /** @param {number} at */
  const sy = (at) => H - M.bottom - ((at - y0) / (y1 - y0)) * (H - M.top - M.bottom);
  const xt = axis === 'step' ? ticks(x0, x1).filter(Number.isInteger) : axis === 'wall' ? timeTicks(x0, x1) : ticks(x0, x1);
  const yt = options.log ? logTicks(y0, y1) : ticks(y0, y1).map((value) => ({ value, at: value }));

  /**
   * @param {Placed[]} points
   * @param {(p: Placed) => number} value
   */
  const path = (points, value) => {
    let d = '';
    let pen = 'M';
    let plotted = 0;
    for (const p of points) {
      if (!onScale(value(p))) {
        pen = 'M';
        continue;
      }
      d += `${pen}${round(sx(p.x))},${round(sy(ty(value(p))))} `;
      pen = 'L';
      plotted++;
    }
    return { d: d.trim(), plotted };
  };

  const chart = svg(
    'svg',
    { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-title ${id}-desc` },
    svg('desc', { id: `${id}-desc` }, `${key} over ${AXIS_LABELS[axis]} for ${series.map((s) => s.label).join(', ')}`),
    svg(
      'clipPath',
      { id: `${id}-clip` },
      svg('rect', { x: M.left, y: M.top - 4, width: W - M.left - M.right, height: H - M.top - M.bottom + 8 }),
    ),
    svg(
      'g',
      { class: 'grid' },
      yt.map((t) => svg('line', { x1: M.left, x2: W - M.right, y1: round(sy(t.at)), y2: round(sy(t.at)) })),
    ),
    svg(
      'g',
      { class: 'axis x-axis' },
      svg('line', { x1: M.left, x2: W - M.right, y1: H - M.bottom, y2: H - M.bottom }),
      xt.map((t) =>
        svg(
          'g',
          {},
          svg('line', { x1: round(sx(t)), x2: round(sx(t)), y1: H - M.bottom, y2: H - M.bottom + 4 }),
          svg('text', { class: 'tick', x: round(sx(t)), y: H - M.bottom + 16, 'text-anchor': 'middle' }, formatX(axis, t, x1 - x0)),
        ),
      ),
      svg('text', { class: 'axis-label', x: M.left + (W - M.left - M.right) / 2, y: H - 6, 'text-anchor': 'middle' }, AXIS_LABELS[axis]),
    ),
    svg(
      'g',
      { class: 'axis y-axis', dataset: { scale: options.log ? 'log' : 'linear' } },
      svg('line', { x1: M.left, x2: M.left, y1: M.top, y2: H - M.bottom }),
      yt.map((t) =>
        svg(
          'g',
          {},
          svg('line', { x1: M.left - 4, x2: M.left, y1: round(sy(t.at)), y2: round(sy(t.at)) }),
          svg('text', { class: 'tick', x: M.left - 7, y: round(sy(t.at)) + 4, 'text-anchor': 'end' }, formatNumber(t.value)),
        ),
      ),
      svg(
        'text',
        { class: 'axis-label', transform: `translate(14 ${M.top + (H - M.top - M.bottom) / 2}) rotate(-90)`, 'text-anchor': 'middle' },
        key,
      ),
    ),
    svg(
      'g',
      { class: 'lines', 'clip-path': `url(#${id}-clip)` },
      lines.map(({ s, points }) => {
        const line = path(points, (p) => p.y);
        return svg(
          'g',
          { class: 'run-series', dataset: { runId: s.id } },
          // smoothed, the values themselves stay as a faint line beneath
          smoothed ? svg('path', { class: 'raw', d: path(points, (p) => p.raw).d, stroke: s.color }) : null,
          svg(
            'path',
            { class: 'series', d: line.d, stroke: s.color, dataset: { runId: s.id, points: line.plotted } },
            svg('title', {}, `${s.label}: ${line.plotted} points`),
          ),
          line.plotted <= 100 && !smoothed
            ? points
                .filter((p) => onScale(p.y))
                .map((p) =>
                  svg(
                    'circle',
                    { cx: round(sx(p.x)), cy: round(sy(ty(p.y))), r: 2.5, fill: s.color },
                    svg('title', {}, `${s.label} · ${AXIS_LABELS[axis]} ${formatX(axis, p.x, x1 - x0)}: ${p.y}`),
                  ),
                )
            : null,
        );
      }),
    ),
  );
  dragToZoom(chart, options);

  const legend = h(
    'ul',
    { class: 'legend' },
    series.map((s) => {
      const swatch = h('span', { class: 'swatch', 'aria-hidden': 'true' });
      swatch.style.background = s.color; // through the CSSOM, which the page's CSP allows (a style attribute it would not)
      return h('li', {}, swatch, s.label);
    }),
  );
  return append(figure, [chart, legend, chartData(key, lines, axis)]);
}

/**
 * Dragging across the chart zooms to what was dragged over (a part of the part shown); a click does nothing.
 * @param {SVGSVGElement} chart
 * @param {ChartOptions} options
 */
function dragToZoom(chart, options) {
  const onZoom = options.onZoom;
  if (!onZoom) return;
  const brush = svg('rect', { class: 'zoom-brush', y: M.top, height: H - M.top - M.bottom, width: 0, visibility: 'hidden' });
  chart.append(brush);
  /** @param {PointerEvent} e */
  const at = (e) => {
    const box = chart.getBoundingClientRect();
    return Math.min(W - M.right, Math.max(M.left, ((e.clientX - box.left) * W) / box.width));
  };
  /** @type {number | null} */
  let start = null;
  chart.addEventListener('pointerdown', (e) => {
    start = at(e);
    chart.setPointerCapture(e.pointerId);
  });
  chart.addEventListener('pointermove', (e) => {
    if (start === null) return;
    const x = at(e);
    brush.setAttribute('x', String(Math.min(start, x)));
    brush.setAttribute('width', String(Math.abs(x - start)));
    brush.setAttribute('visibility', 'visible');
  });
  chart.addEventListener('pointerup', (e) => {
    if (start === null) return;
    const [a, b] = [start, at(e)].sort((p, q) => p - q);
    start = null;
    brush.setAttribute('visibility', 'hidden');
    if ((b ?? 0) - (a ?? 0) < 4) return;
    const [from, to] = options.zoom;
    /** @param {number} x */
    const percent = (x) => from + ((to - from) * (x - M.left)) / (W - M.left - M.right);
    onZoom(percent(a ?? M.left), percent(b ?? W - M.right));
  });
}

/**
 * The chart's numbers as a table (the values, not smoothed), for screen readers and for copying.
 * @param {string} key
 * @param {{ s: Series, points: Placed[] }[]} lines
 * @param {XAxis} axis
 */
function chartData(key, lines, axis) {
  const xs = [...new Set(lines.flatMap((l) => l.points.map((p) => p.x)))].sort((a, b) => a - b);
  const values = lines.map((l) => new Map(l.points.map((p) => [p.x, p.raw])));
  return h(
    'details',
    {},
    h('summary', {}, 'Data'),
    table(
      [AXIS_LABELS[axis], ...lines.map((l) => l.s.label)],
      xs.map((x) =>
        h(
          'tr',
          {},
          h('td', { class: 'num' }, axis === 'wall' ? formatTime(x) : formatNumber(x)),
          values.map((m) => {
            const y = m.get(x);
            return h('td', { class: 'num' }, y === undefined ? '' : formatNumber(y));
          }),
        ),
      ),
      { 'aria-label': `${key} by ${AXIS_LABELS[axis]}` },
    ),
  );
}
