import { createHash } from 'node:crypto';
import type { Database } from '../../src/platform/db/index.ts';
import { centres, DIM, type Distribution, NOISE } from './datasets.ts';

// What bench/retrieval's runs share: seeded random numbers, the dense queries from a dataset's distribution, the
// keyword questions over the collections' made-up vocabulary, and the timing and percentile helpers.

export function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s + 0.5) / 2 ** 32;
  };
}
export const gauss = (next: () => number) => Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
export const unit = (v: number[]) => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

/** Queries from the data's own distribution: uniform directions, or a mixture centre plus the rows' noise. */
export async function queriesFor(db: Database, dist: Distribution, count: number): Promise<number[][]> {
  if (dist === 'random') {
    return Array.from({ length: count }, (_, i) => {
      const next = lcg(1000 + i);
      return unit(Array.from({ length: DIM }, () => next() - 0.5));
    });
  }
  const mixture = await centres(db);
  const next = lcg(4242);
  return Array.from({ length: count }, () => {
    const c = mixture[Math.floor(next() * mixture.length)]!;
    return unit(c.map((x) => x + NOISE * gauss(next)));
  });
}

// Keyword questions: three words of the collections' text (collection.ts: word g of 0..2000 is the first 3 + g % 7
// hex digits of md5(g)), drawn with a skew towards the low numbers, each question with its own letters-only tag (no
// chunk holds one) so that each maps to its own vector for the dense half of hybrid.
export const VOCABULARY = 2000;
export const word = (g: number) =>
  createHash('md5')
    .update(String(g))
    .digest('hex')
    .slice(0, 3 + (g % 7));
const tag = (i: number) => 'qx' + [...i.toString(26)].map((d) => String.fromCharCode(97 + parseInt(d, 26))).join('');
export const question = (i: number) =>
  [1, 2, 3].map((j) => word(Math.floor(VOCABULARY * (((i * 7 + j * 13) % 97) / 97) ** 3))).join(' ') + ` ${tag(i)}`;

export const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

export async function time<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const r = await fn();
  return [performance.now() - t, r];
}
