import type { KernelModules } from './kernel.ts';
import { SLACK } from './rank.ts';
import { createRowStore, type RowStore } from './rows.ts';
import { roundUp32 } from './quantise.ts';
import { clustersFrom, type Clusters, type Layout } from './clusters.ts';

// How a copy's rows are grouped into the leaves of the pruning index (clusters.ts has the bound and the search).
// Built from 64-component sketches of the rows (a count sketch of each code: cosines within about 1/8 of the true
// ones, at a twelfth of the cost): farthest-first seeds drawn from rows spread over the copy, then every row to its
// most similar seed. Any grouping keeps the answer exact (the radius is measured, not assumed); a good one only makes
// the bounds tighter. About N/96 leaves, at most 1024 (a build costs N·leaves sketch products).

/** Rows per leaf aimed at, and the most leaves (each seed is a pass over every row's sketch). */
const LEAF_ROWS = 96;
const MAX_LEAVES = 1024;
/** Rows the seeds are drawn from, per leaf; and rows assigned to the seeds at a time (256 KiB of sketches). */
const SEED_SAMPLE_PER_LEAF = 16;
const ASSIGN_BLOCK = 4096;
/** Components of the sketches the rows are grouped by: cosines there are within about 1/√64 of the true ones. */
const SKETCH_DIM = 64;
/**
 * Before building: rows spread over the copy, each compared with the others. Where fewer than a quarter have a
 * neighbour among them at cosine 0.6 or more, no cluster of rows is tight enough for the bound to skip it (a leaf of
 * members at mutual cosine ρ has a radius of about √(1 − ρ), which only a score above it lets go, so ρ > 0.62), as
 * with uniformly random vectors: nothing is built. A thousand passes over a thousand rows, against a build's thousand
 * passes over every row's sketch.
 */
const SAMPLE_ROWS = 1024;
const NEIGHBOUR_COSINE = 0.6;
const NEIGHBOURED_SHARE = 0.25;
/** Probe searches after a build; above this share of rows scanned on average the index is dropped. */
const PROBES = 16;
const PROBE_K = 10;
const USELESS_SHARE = 0.5;

export type Built =
  | { clusters: Clusters; layout: Layout; order: Int32Array }
  | { useless: true; order: Int32Array | undefined; probeShare: number; neighboured: number };

/**
 * Groups rows 0..count-1 of `store` into leaves, moving them so each leaf is contiguous (`order`: row p now holds
 * what row order[p] held; the caller moves its own per-row data alike). `useless` when probe searches would still
 * scan over half the rows (vectors without clusters, such as uniformly random ones): the rows stay moved, harmlessly.
 */
export function buildClusters(modules: KernelModules, store: RowStore, dim: number, count: number, seed = 1): Built {
  const leaves = Math.max(1, Math.min(Math.round(count / LEAF_ROWS), MAX_LEAVES));
  const random = mulberry32(seed);
  const share = neighbouredShare(modules, store, dim, count);
  if (share < NEIGHBOURED_SHARE) return { useless: true, order: undefined, probeShare: 1, neighboured: share };
  const sketches = sketch(modules, store, dim, count, random);
  // seeds from rows spread over the copy, then every row to its most similar seed, a block of rows at a time
  const sampled = Math.min(count, SEED_SAMPLE_PER_LEAF * leaves);
  const sample = sampled === count ? sketches : sampleOf(modules, sketches, SKETCH_DIM, count, sampled); // the seeds are drawn from it
  const seeds = farthestFirst(sample, sampled, leaves, random);
  const group = sampled === count ? seeds.group : assign(sketches, count, seeds);

  // rows in group order (a stable counting sort), the leaves' starts
  const starts = new Int32Array(leaves + 1);
  for (let r = 0; r < count; r++) starts[group[r]! + 1]! += 1;
  for (let g = 0; g < leaves; g++) starts[g + 1]! += starts[g]!;
  const next = starts.slice();
  const order = new Int32Array(count);
  for (let r = 0; r < count; r++) order[next[group[r]!]!++] = r;
  store.permute(order);
  const leafStarts: number[] = [];
  for (let g = 0; g < leaves; g++) if (starts[g + 1]! > starts[g]!) leafStarts.push(starts[g]!);
  leafStarts.push(count);

  const layout = leavesOf(store, dim, Int32Array.from(leafStarts));
  const clusters = clustersFrom(modules, store, dim, layout);
  const scanned = probe(store, dim, clusters, count, random);
  if (scanned > USELESS_SHARE) return { useless: true, order, probeShare: scanned, neighboured: share };
  layout.probeShare = scanned;
  return { clusters: { ...clusters, probeShare: scanned }, layout, order };
}

/** The share of SAMPLE_ROWS rows, spread evenly over the copy, with another of them at NEIGHBOUR_COSINE or more. */
function neighbouredShare(modules: KernelModules, store: RowStore, dim: number, count: number): number {
  const stride = Math.ceil(dim / 16) * 16;
  const n = Math.min(count, SAMPLE_ROWS);
  const sample = sampleOf(modules, store, dim, count, n);
  const code = new Int8Array(stride);
  const q7 = new Int8Array(stride);
  let neighboured = 0;
  for (let s = 0; s < n; s++) {
    sample.readRow(s, code);
    let max = 0;
    for (let i = 0; i < dim; i++) max = Math.max(max, Math.abs(code[i]!));
    let length = 0;
    for (let i = 0; i < dim; i++) {
      q7[i] = max > 0 ? Math.round((code[i]! * 63) / max) : 0;
      length += q7[i]! * q7[i]!;
    }
    if (length === 0) continue;
    const dots = sample.roughDots(q7, 0, n);
    const factor = 1 / Math.sqrt(length);
    for (let t = 0; t < n; t++) {
      if (t !== s && dots[t]! * sample.scale[t]! * factor >= NEIGHBOUR_COSINE) {
        neighboured += 1;
        break;
      }
    }
  }
  return neighboured / n;
}

type Seeds = { q7: Int8Array[]; factor: Float64Array; group: Int32Array };

/** The seed's sketch as a query of 63 steps a side, and what turns its dot products into cosines. */
function seedQuery(sketches: RowStore, row: number): { q7: Int8Array; factor: number } {
  const code = new Int8Array(SKETCH_DIM);
  sketches.readRow(row, code);
  let max = 0;
  for (let i = 0; i < SKETCH_DIM; i++) max = Math.max(max, Math.abs(code[i]!));
  const q7 = new Int8Array(SKETCH_DIM);
  let length = 0;
  for (let i = 0; i < SKETCH_DIM; i++) {
    q7[i] = max > 0 ? Math.round((code[i]! * 63) / max) : 0;
    length += q7[i]! * q7[i]!;
  }
  return { q7, factor: length > 0 ? 1 / Math.sqrt(length) : 0 };
}

/**
 * Farthest-first seeds over rows 0..n-1 of the sketches: each next seed is the row least like every seed so far, so
 * a group of rows unlike the rest gets a seed of its own before any group gets a second. Each row's most similar seed.
 */
function farthestFirst(sketches: RowStore, n: number, leaves: number, random: () => number): Seeds {
  const group = new Int32Array(n);
  const best = new Float64Array(n).fill(-Infinity);
  const seeds: Seeds = { q7: [], factor: new Float64Array(leaves), group };
  let pick = Math.floor(random() * n);
  for (let j = 0; j < leaves; j++) {
    const { q7, factor } = seedQuery(sketches, pick);
    seeds.q7.push(q7);
    seeds.factor[j] = factor;
    const dots = sketches.roughDots(q7, 0, n, true);
    const scale = sketches.scale;
    let worst = Infinity;
    for (let r = 0; r < n; r++) {
      const cos = dots[r]! * scale[r]! * factor;
      if (cos > best[r]!) {
        best[r] = cos;
        group[r] = j;
      }
      if (best[r]! < worst) {
        worst = best[r]!;
        pick = r;
      }
    }
  }
  return seeds;
}

/** Each of rows 0..count-1 to its most similar seed, ASSIGN_BLOCK rows at a time so a block stays in cache. */
function assign(sketches: RowStore, count: number, seeds: Seeds): Int32Array {
  const group = new Int32Array(count);
  const best = new Float64Array(ASSIGN_BLOCK);
  for (let from = 0; from < count; from += ASSIGN_BLOCK) {
    const to = Math.min(count, from + ASSIGN_BLOCK);
    best.fill(-Infinity);
    seeds.q7.forEach((q7, j) => {
      const dots = sketches.roughDots(q7, from, to, true);
      const factor = seeds.factor[j]!;
      for (let r = from; r < to; r++) {
        const cos = dots[r]! * factor; // the row's own scale is the same for every seed: left out
        if (cos > best[r - from]!) {
          best[r - from] = cos;
          group[r] = j;
        }
      }
    });
  }
  return group;
}

/** `n` of the first `count` rows of `store` (of dimension `dim`), spread evenly, as a store of their own. */
function sampleOf(modules: KernelModules, store: RowStore, dim: number, count: number, n: number): RowStore {
  const sample = createRowStore(modules, dim);
  sample.reserve(n);
  const code = new Int8Array(Math.ceil(dim / 16) * 16); // readRow writes the row's whole stride
  const row = new Float32Array(dim);
  for (let s = 0; s < n; s++) {
    const r = Math.floor((s * count) / n);
    store.readRow(r, code);
    for (let i = 0; i < dim; i++) row[i] = code[i]! * store.scale[r]!;
    sample.write(s, row);
  }
  return sample;
}

/**
 * Each row's unit sketch: every component of its code added, with a random sign, into one of SKETCH_DIM sums (a
 * count sketch, which keeps inner products in expectation), kept as int8 rows of a store of their own.
 */
function sketch(modules: KernelModules, store: RowStore, dim: number, count: number, random: () => number): RowStore {
  const stride = Math.ceil(dim / 16) * 16;
  const bucket = Int32Array.from({ length: dim }, () => Math.floor(random() * SKETCH_DIM));
  const sign = Float64Array.from({ length: dim }, () => (random() < 0.5 ? -1 : 1));
  const sketches = createRowStore(modules, SKETCH_DIM);
  sketches.reserve(count);
  const code = new Int8Array(stride);
  const sums = new Float64Array(SKETCH_DIM);
  const unit = new Float32Array(SKETCH_DIM);
  for (let r = 0; r < count; r++) {
    store.readRow(r, code);
    sums.fill(0);
    for (let i = 0; i < dim; i++) sums[bucket[i]!] = sums[bucket[i]!]! + sign[i]! * code[i]!;
    let length = 0;
    for (let i = 0; i < SKETCH_DIM; i++) length += sums[i]! * sums[i]!;
    const inverse = length > 0 ? 1 / Math.sqrt(length) : 0;
    for (let i = 0; i < SKETCH_DIM; i++) unit[i] = sums[i]! * inverse;
    sketches.write(r, unit);
  }
  return sketches;
}

/** Centroids (the mean of the members' codes, rounded to float32) and proven radii of the leaves. */
function leavesOf(store: RowStore, dim: number, starts: Int32Array<ArrayBuffer>): Layout {
  const stride = Math.ceil(dim / 16) * 16;
  const leaves = starts.length - 1;
  const centroids = new Float32Array(leaves * dim);
  const radius = new Float64Array(leaves);
  const code = new Int8Array(stride);
  const sum = new Float64Array(dim);
  const c64 = new Float64Array(dim);
  const { scale, residual, norm } = store;
  for (let l = 0; l < leaves; l++) {
    const from = starts[l]!;
    const to = starts[l + 1]!;
    sum.fill(0);
    for (let r = from; r < to; r++) {
      store.readRow(r, code);
      const s = scale[r]!;
      for (let i = 0; i < dim; i++) sum[i] = sum[i]! + code[i]! * s;
    }
    const c32 = centroids.subarray(l * dim, (l + 1) * dim);
    let c2 = 0;
    for (let i = 0; i < dim; i++) {
      c32[i] = sum[i]! / (to - from);
      c64[i] = c32[i]!;
      c2 += c64[i]! * c64[i]!;
    }
    // x̂·c ≥ x̂·ĉ − ‖x̂‖·‖c − ĉ‖ with ĉ the centroid's integer query: so ‖x̂ − c‖² ≤ ‖x̂‖² − 2(x̂·ĉ − ‖x̂‖ρ) + ‖c‖²
    const q = store.setQuery(c64);
    let max = 0;
    if (q) {
      const dots = store.fineDots(from, to);
      for (let r = from; r < to; r++) {
        const n = norm[r]!;
        const far = n * n - 2 * (dots[r]! * scale[r]! * q.scale - n * q.residual) + c2 + SLACK;
        max = Math.max(max, Math.sqrt(Math.max(0, far)) + residual[r]!);
      }
    } else {
      for (let r = from; r < to; r++) max = Math.max(max, norm[r]! + residual[r]!);
    }
    radius[l] = roundUp32(max + SLACK);
  }
  return { starts, centroids, radius, probeShare: 1 };
}

/** The average share of rows a top-10 search scans, for rows of the copy taken as questions. */
function probe(store: RowStore, dim: number, clusters: Clusters, count: number, random: () => number): number {
  const stride = Math.ceil(dim / 16) * 16;
  const code = new Int8Array(stride);
  const unit = new Float64Array(dim);
  let scanned = 0;
  for (let p = 0; p < PROBES; p++) {
    const r = Math.floor(random() * count);
    store.readRow(r, code);
    let length = 0;
    for (let i = 0; i < dim; i++) length += code[i]! * code[i]!;
    if (length === 0) continue;
    for (let i = 0; i < dim; i++) unit[i] = code[i]! / Math.sqrt(length);
    scanned += clusters.candidates(unit, count, Math.min(PROBE_K, count))?.scanned ?? count;
  }
  return scanned / (PROBES * count);
}

/** Seeded uniform numbers in [0, 1): the same copy is grouped the same way on every replica. */
function mulberry32(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
