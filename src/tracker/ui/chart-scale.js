// @ts-check
// The arithmetic of a metric chart: tick values for a linear, logarithmic or time axis, an axis' domain, and the
// exponential moving average that smooths a line.
import { formatNumber } from './format.js';

/**
 * Round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten.
 * @param {number} lo
 * @param {number} hi
 */
export function ticks(lo, hi, count = 5) {
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => raw <= s * (1 + 1e-9)) ?? 10 * power;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/**
 * Ticks of a log10 axis whose domain [lo, hi] is in powers of ten: each power of ten inside it, or, within less than
 * a decade, round values placed on the log scale. Answers the values and where they sit (their log10).
 * @param {number} lo
 * @param {number} hi
 * @returns {{ value: number, at: number }[]}
 */
export function logTicks(lo, hi) {
  const powers = [];
  for (let k = Math.ceil(lo); k <= Math.floor(hi); k++) powers.push({ value: 10 ** k, at: k });
  if (powers.length >= 2) return powers;
  return ticks(10 ** lo, 10 ** hi)
    .filter((v) => v > 0)
    .map((value) => ({ value, at: Math.log10(value) }));
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Steps a time axis is ticked in: whole seconds, minutes, hours or days. */
const TIME_STEPS = [1, 2, 5, 10, 15, 30]
  .map((s) => s * SECOND)
  .concat(
    [1, 2, 5, 10, 15, 30].map((m) => m * MINUTE),
    [1, 2, 3, 6, 12].map((h) => h * HOUR),
    [1, 2, 7, 14, 30, 90, 365].map((d) => d * DAY),
  );

/**
 * Ticks of a wall-clock axis over [lo, hi] (milliseconds since the epoch, UTC), on whole seconds, minutes, hours or days.
 * @param {number} lo
 * @param {number} hi
 */
export function timeTicks(lo, hi, count = 5) {
  const raw = (hi - lo) / count;
  const step = TIME_STEPS.find((s) => raw <= s);
  if (!step) return ticks(lo, hi, count);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) out.push(v);
  return out;
}

/**
 * A wall-clock tick's label in UTC: the time of day within a day's span, the date and time beyond it.
 * @param {number} ms
 * @param {number} span the axis' width in milliseconds
 */
export function formatClock(ms, span) {
  const iso = new Date(ms).toISOString();
  if (span >= 2 * DAY) return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
  return span >= 10 * MINUTE ? iso.slice(11, 16) : iso.slice(11, 19);
}

/**
 * A tick value written for its axis.
 * @param {'step' | 'wall' | 'relative'} axis
 * @param {number} v
 * @param {number} span
 */
export const formatX = (axis, v, span) => (axis === 'wall' ? formatClock(v, span) : formatNumber(v));

/**
 * [min, max] of the values widened by `margin` of the range; a single value gets a range around it (`flat` on each
 * side, or a tenth of the value).
 * @param {number[]} values
 * @param {number} [margin]
 * @param {number} [flat]
 * @returns {[number, number]}
 */
export function domain(values, margin = 0, flat) {
  const lo = values.reduce((a, b) => Math.min(a, b), Infinity);
  const hi = values.reduce((a, b) => Math.max(a, b), -Infinity);
  if (lo === hi) {
    const pad = flat ?? (lo === 0 ? 1 : Math.abs(lo) * 0.1);
    return [lo - pad, hi + pad];
  }
  const pad = (hi - lo) * margin;
  return [lo - pad, hi + pad];
}

/**
 * An exponential moving average with TensorBoard's correction for its start (each value divided by 1 - w^n, so the
 * first values are not pulled towards zero); a value that is not finite stays as it is and does not count.
 * @param {number[]} values
 * @param {number} weight 0 (none) to below 1 (smoothest)
 */
export function smooth(values, weight) {
  if (!(weight > 0)) return values;
  let last = 0;
  let n = 0;
  return values.map((y) => {
    if (!Number.isFinite(y)) return y;
    last = last * weight + (1 - weight) * y;
    n++;
    return last / (1 - weight ** n);
  });
}
