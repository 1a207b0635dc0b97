// @ts-check
// The controls every metric chart of a page follows: the x axis (step, wall time, relative time), smoothing (an
// exponential moving average's weight), a log scale for y, and the part of the x axis shown (zoom, in percent; a
// drag across a chart sets it too). They are part of the link (x, smoothing, log, zoom) without a new navigation.
import { h } from './dom.js';

/** @typedef {import('./chart.js').ChartOptions} ChartOptions */
/** @typedef {import('./chart.js').XAxis} XAxis */

const AXES = /** @type {const} */ ([
  ['step', 'Step'],
  ['wall', 'Wall time'],
  ['relative', 'Relative time'],
]);

/** @param {string | null} v @param {number} lo @param {number} hi @param {number} fallback */
const bounded = (v, lo, hi, fallback) => {
  const n = Number(v);
  return v !== null && v !== '' && Number.isFinite(n) ? Math.min(hi, Math.max(lo, n)) : fallback;
};

/**
 * The options a link names.
 * @param {URLSearchParams} query
 * @returns {ChartOptions}
 */
export function chartOptions(query) {
  const x = AXES.find(([a]) => a === query.get('x'))?.[0] ?? 'step';
  const [from, to] = (query.get('zoom') ?? '').split(',');
  const zoomFrom = bounded(from ?? null, 0, 100, 0);
  const zoomTo = bounded(to ?? null, 0, 100, 100);
  return {
    x,
    smoothing: bounded(query.get('smoothing'), 0, 0.99, 0),
    log: query.get('log') === '1',
    zoom: zoomFrom < zoomTo ? [zoomFrom, zoomTo] : [0, 100],
  };
}

/**
 * The link's query with these options (defaults left out), the rest of it kept.
 * @param {URLSearchParams} query
 * @param {ChartOptions} o
 */
function withOptions(query, o) {
  const q = new URLSearchParams(query);
  const set = (/** @type {string} */ k, /** @type {string | null} */ v) => (v === null ? q.delete(k) : q.set(k, v));
  set('x', o.x === 'step' ? null : o.x);
  set('smoothing', o.smoothing > 0 ? String(o.smoothing) : null);
  set('log', o.log ? '1' : null);
  set('zoom', o.zoom[0] > 0 || o.zoom[1] < 100 ? o.zoom.map((v) => Number(v.toFixed(2))).join(',') : null);
  return q;
}

/**
 * The controls, set to `options`; each change gives the new options to `draw` and writes them into the link.
 * @param {ChartOptions} options
 * @param {(options: ChartOptions) => void} draw
 * @returns {{ form: HTMLFormElement, zoomTo: (from: number, to: number) => void }}
 */
export function chartControls(options, draw) {
  let current = options;
  const axis = h(
    'select',
    { id: 'chart-x' },
    AXES.map(([v, label]) => h('option', { value: v, selected: v === options.x }, label)),
  );
  const smoothing = h('input', { type: 'range', id: 'chart-smoothing', min: 0, max: 0.99, step: 0.01, value: options.smoothing });
  const shownSmoothing = h('output', { for: 'chart-smoothing', id: 'chart-smoothing-value' }, String(options.smoothing));
  const log = h('input', { type: 'checkbox', id: 'chart-log', checked: options.log });
  const from = h('input', { type: 'range', id: 'zoom-from', min: 0, max: 100, step: 0.5, value: options.zoom[0] });
  const to = h('input', { type: 'range', id: 'zoom-to', min: 0, max: 100, step: 0.5, value: options.zoom[1] });
  const reset = h('button', { type: 'button', id: 'zoom-reset' }, 'Reset zoom');

  /** @param {Partial<ChartOptions>} change */
  const update = (change) => {
    current = { ...current, ...change };
    shownSmoothing.textContent = String(current.smoothing);
    from.value = String(current.zoom[0]);
    to.value = String(current.zoom[1]);
    reset.disabled = current.zoom[0] === 0 && current.zoom[1] === 100;
    const [path, query = ''] = location.hash.split('?');
    const qs = withOptions(new URLSearchParams(query), current).toString();
    history.replaceState(null, '', `${path}${qs ? `?${qs}` : ''}`);
    draw(current);
  };
  axis.addEventListener('change', () => update({ x: /** @type {XAxis} */ (axis.value), zoom: [0, 100] }));
  smoothing.addEventListener('input', () => update({ smoothing: Number(smoothing.value) }));
  log.addEventListener('change', () => update({ log: log.checked }));
  // the two ends never cross: the one moved stops half a percent short of the other
  from.addEventListener('input', () => update({ zoom: [Math.min(Number(from.value), current.zoom[1] - 0.5), current.zoom[1]] }));
  to.addEventListener('input', () => update({ zoom: [current.zoom[0], Math.max(Number(to.value), current.zoom[0] + 0.5)] }));
  reset.addEventListener('click', () => update({ zoom: [0, 100] }));
  reset.disabled = options.zoom[0] === 0 && options.zoom[1] === 100;

  const form = h(
    'form',
    { class: 'toolbar chart-controls', id: 'chart-controls', 'aria-label': 'Chart options', onsubmit: (e) => e.preventDefault() },
    h('label', { for: 'chart-x' }, 'X axis'),
    axis,
    h('label', { for: 'chart-smoothing' }, 'Smoothing'),
    smoothing,
    shownSmoothing,
    h('label', {}, log, ' Log scale'),
    h('label', { for: 'zoom-from' }, 'Zoom from (%)'),
    from,
    h('label', { for: 'zoom-to' }, 'to (%)'),
    to,
    reset,
  );
  return { form, zoomTo: (a, b) => update({ zoom: [a, b] }) };
}
