// @ts-check
// How the UI writes the wire's values: numbers, times, durations, sizes, and literals of the search grammar.

/** @typedef {import('./types.ts').Run} Run */

/**
 * The wire carries NaN and the infinities as strings and int64 may come as strings.
 * @param {number | string} v
 */
export const num = (v) => (typeof v === 'number' ? v : Number(v));

/** @param {number | string} v */
export function formatNumber(v) {
  const n = num(v);
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return String(n);
  return String(Number(n.toPrecision(6)));
}

/** @param {number | string | null | undefined} ms */
export function formatTime(ms) {
  if (ms === undefined || ms === null || ms === '') return '';
  return new Date(num(ms)).toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
}

/**
 * @param {number | string | null | undefined} start
 * @param {number | string | null | undefined} end
 */
export function formatDuration(start, end) {
  if (!start || !end) return '';
  let s = Math.round((num(end) - num(start)) / 1000);
  const parts = [];
  for (const [unit, size] of /** @type {const} */ ([
    ['h', 3600],
    ['m', 60],
  ])) {
    if (s >= size) parts.push(`${Math.floor(s / size)}${unit}`);
    s %= size;
  }
  parts.push(`${s}s`);
  return parts.join(' ');
}

/**
 * A short duration (a span's, a trace's) in milliseconds or seconds, whichever reads better.
 * @param {number} ms
 */
export const formatMillis = (ms) => (ms < 1000 ? `${Number(ms.toPrecision(4))} ms` : `${Number((ms / 1000).toPrecision(4))} s`);

/** @param {number | string | null | undefined} n */
export function formatBytes(n) {
  if (n === undefined || n === null) return '';
  const b = num(n);
  if (b < 1024) return `${b} B`;
  if (b < 1024 * 1024) return `${(b / 1024).toFixed(1)} KiB`;
  return `${(b / 1024 / 1024).toFixed(1)} MiB`;
}

/** @param {Run} run */
export const runName = (run) => run.info.run_name || run.info.run_id.slice(0, 8);

/**
 * @template {{ key: string }} T
 * @param {T[] | undefined} items
 * @returns {Map<string, T>}
 */
export const byKey = (items) => new Map((items ?? []).map((i) => [i.key, i]));

/**
 * A string literal of the search grammar (a quote inside is doubled).
 * @param {string} s
 */
export const quote = (s) => `'${s.replace(/'/g, "''")}'`;

/**
 * A key as the search grammar reads it: bare when it is a plain name, else in backticks (doubled inside).
 * @param {string} key
 */
export function quoteKey(key) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : `\`${key.replace(/`/g, '``')}\``;
}
