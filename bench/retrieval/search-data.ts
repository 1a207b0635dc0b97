import { DIM, NOISE, type Distribution } from './datasets.ts';
import { VOCABULARY, word } from './questions.ts';

// The documents of the search-backend run (search.ts), made in the process so no kept table is needed: chunk i's
// text is WORDS words drawn uniformly from the vocabulary of the keyword questions (questions.ts; a chunk of the kept
// collections, collection.ts, is a window of such words), and its vector a unit vector of DIM dimensions from the
// distributions of datasets.ts (random: components uniform in [-0.5, 0.5]; clustered: one of CENTRES centres plus
// Gaussian noise of length about 0.5). Every number is a counter-based draw (mulberry32's output function of
// seed + n × its increment), so chunk i is the same on every run and any chunk can be made without the others.

/** Words in a chunk: about 2 400 characters, as the kept collections' chunks (SVC_CHUNK_SIZE_TOKENS for the run). */
export const WORDS = 340;
const CENTRES = 1000;
const SEEDS = { text: 0x1234567, random: 0x2345678, clustered: 0x3456789, centres: 0x4567891, queries: 0x5678912 };

const draw = (seed: number, n: number) => {
  let t = (seed + Math.imul(n, 0x6d2b79f5)) | 0;
  t = Math.imul(t ^ (t >>> 15), 1 | t);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 2 ** 32;
};
const gaussian = (seed: number, n: number) => Math.sqrt(-2 * Math.log(draw(seed, 2 * n))) * Math.cos(2 * Math.PI * draw(seed, 2 * n + 1));
const unit = (v: Float64Array) => {
  let s = 0;
  for (const x of v) s += x * x;
  const norm = Math.sqrt(s);
  return Array.from(v, (x) => x / norm);
};

const words = Array.from({ length: VOCABULARY }, (_, g) => word(g));

export function chunkText(i: number): string {
  const out: string[] = new Array(WORDS);
  for (let w = 0; w < WORDS; w++) out[w] = words[Math.floor(draw(SEEDS.text, i * WORDS + w) * VOCABULARY)]!;
  return out.join(' ');
}

const centres: number[][] = Array.from({ length: CENTRES }, (_, c) =>
  unit(Float64Array.from({ length: DIM }, (_, k) => gaussian(SEEDS.centres, c * DIM + k))),
);

/** Row i of the distribution; the queries are rows of their own seed (i counted from 0 there). */
export function vectorOf(dist: Distribution, i: number, seed: number = SEEDS[dist]): number[] {
  const v = new Float64Array(DIM);
  if (dist === 'random') for (let k = 0; k < DIM; k++) v[k] = draw(seed, i * DIM + k) - 0.5;
  else {
    const centre = centres[i % CENTRES]!;
    for (let k = 0; k < DIM; k++) v[k] = centre[k]! + NOISE * gaussian(seed, i * DIM + k);
  }
  return unit(v);
}

/** Queries from the data's own distribution (uniform directions, or a centre plus the rows' noise), not rows of it. */
export const queryVector = (dist: Distribution, i: number) => vectorOf(dist, i, SEEDS.queries);
