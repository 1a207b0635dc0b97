import { instantiateKernel, type Kernel } from './kernel.ts';

// Exact top-k by cosine similarity, fast. Every vector is kept twice: int8 (per-row scale) in WebAssembly memory
// for a SIMD pass over all rows, and float32 for re-ranking. The int8 pass gives each row an approximate score
// and a proven error bound (|x·q − x̂·q̂| ≤ ‖x − x̂‖·‖q‖ + ‖x̂‖·‖q − q̂‖); only rows whose upper bound reaches the
// k-th best lower bound can be in the top k, and those few are scored exactly. The result is the exact top k.

export type Hit = { id: string; score: number };

export interface VectorIndex {
  readonly dim: number;
  readonly size: number;
  /** Bytes held for the vectors (int8 and float copies and per-row bounds). */
  readonly bytes: number;
  add(ids: readonly string[], vectors: readonly (Float32Array | readonly number[])[]): void;
  /** The k most similar rows, highest score first; equal scores in insertion order. */
  search(query: Float32Array | readonly number[], k: number): Hit[];
  clear(): void;
}

const QUERY_AT = 0;
const ROWS_AT = 65536;
const PAGE = 65536;
const SLACK = 1e-6; // covers float rounding in the bound arithmetic itself

export async function createVectorIndex(dim: number): Promise<VectorIndex> {
  if (!Number.isInteger(dim) || dim < 1) throw new RangeError(`dimension must be a positive integer, got ${dim}`);
  const stride = Math.ceil(dim / 16) * 16;
  if (stride > ROWS_AT) throw new RangeError(`dimension ${dim} is above the supported ${ROWS_AT}`);
  const kernel: Kernel = await instantiateKernel();

  let size = 0;
  let capacity = 0;
  let floats = new Float32Array(0);
  let scales = new Float64Array(0);
  let residuals = new Float64Array(0);
  let norms = new Float64Array(0);
  let ids: string[] = [];
  const quantised = new Int8Array(stride);
  const unit = new Float64Array(dim);

  const outAt = () => ROWS_AT + capacity * stride;

  function reserve(rows: number) {
    if (rows <= capacity) return;
    const next = Math.max(rows, capacity * 2, 256);
    const needed = ROWS_AT + next * stride + next * 4;
    const have = kernel.memory.buffer.byteLength;
    if (needed > have) kernel.memory.grow(Math.ceil((needed - have) / PAGE));
    const grow = <T extends Float32Array | Float64Array>(old: T, make: (n: number) => T, per: number): T => {
      const fresh = make(next * per);
      fresh.set(old);
      return fresh;
    };
    floats = grow(floats, (n) => new Float32Array(n), dim);
    scales = grow(scales, (n) => new Float64Array(n), 1);
    residuals = grow(residuals, (n) => new Float64Array(n), 1);
    norms = grow(norms, (n) => new Float64Array(n), 1);
    capacity = next;
  }

  /** Normalises `v` into `unit`; a zero vector stays zero (it scores 0 against everything). */
  function normalise(v: Float32Array | readonly number[]) {
    if (v.length !== dim) throw new RangeError(`expected a vector of dimension ${dim}, got ${v.length}`);
    let sum = 0;
    for (let i = 0; i < dim; i++) sum += (v[i] as number) * (v[i] as number);
    const inv = sum > 0 ? 1 / Math.sqrt(sum) : 0;
    for (let i = 0; i < dim; i++) unit[i] = (v[i] as number) * inv;
  }

  /** int8 copy of `values` into `target`; returns the scale, ‖x − x̂‖ and ‖x̂‖. */
  function quantise(values: ArrayLike<number>, target: Int8Array) {
    let max = 0;
    for (let i = 0; i < dim; i++) max = Math.max(max, Math.abs(values[i]!));
    const scale = max / 127;
    let residual = 0;
    let norm = 0;
    for (let i = 0; i < dim; i++) {
      const q = scale > 0 ? Math.max(-127, Math.min(127, Math.round(values[i]! / scale))) : 0;
      target[i] = q;
      const approx = q * scale;
      residual += (values[i]! - approx) ** 2;
      norm += approx * approx;
    }
    target.fill(0, dim);
    return { scale, residual: Math.sqrt(residual), norm: Math.sqrt(norm) };
  }

  const index: VectorIndex = {
    dim,
    get size() {
      return size;
    },
    get bytes() {
      return size * (stride + dim * 4 + 3 * 8);
    },
    add(newIds, vectors) {
      if (newIds.length !== vectors.length) throw new RangeError('ids and vectors differ in length');
      reserve(size + vectors.length);
      const rows = new Int8Array(kernel.memory.buffer, ROWS_AT, capacity * stride);
      for (let n = 0; n < vectors.length; n++) {
        normalise(vectors[n]!);
        const row = size + n;
        floats.set(unit, row * dim);
        // quantise what is stored (float32), so the bound holds for the vector we re-rank with
        const stored = floats.subarray(row * dim, row * dim + dim);
        const q = quantise(stored, rows.subarray(row * stride, row * stride + stride));
        scales[row] = q.scale;
        residuals[row] = q.residual;
        norms[row] = q.norm;
      }
      ids = ids.concat(newIds);
      size += vectors.length;
    },
    search(query, k) {
      if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
      normalise(query);
      if (size === 0) return [];
      const q = quantise(unit, quantised);
      new Int8Array(kernel.memory.buffer, QUERY_AT, stride).set(quantised);
      kernel.dots(QUERY_AT, ROWS_AT, size, stride, outAt());
      const dots = new Int32Array(kernel.memory.buffer, outAt(), size);
      const queryNorm = q.residual > 0 || q.norm > 0 ? 1 : 0;

      const want = Math.min(k, size);
      const floor = kthLargestLowerBound(dots, q.scale, q.residual, queryNorm, want);
      const candidates: number[] = [];
      for (let r = 0; r < size; r++) {
        const approx = scales[r]! * q.scale * dots[r]!;
        const bound = residuals[r]! * queryNorm + norms[r]! * q.residual + SLACK;
        if (approx + bound >= floor) candidates.push(r);
      }
      const scored = candidates.map((r) => ({ r, score: exactScore(r) }));
      scored.sort((a, b) => b.score - a.score || a.r - b.r);
      return scored.slice(0, want).map(({ r, score }) => ({ id: ids[r]!, score }));
    },
    clear() {
      size = 0;
      ids = [];
    },
  };

  function kthLargestLowerBound(dots: Int32Array, qScale: number, qResidual: number, qNorm: number, k: number): number {
    // a min-heap of the k largest lower bounds seen so far
    const heap = new Float64Array(k);
    let filled = 0;
    for (let r = 0; r < dots.length; r++) {
      const lower = scales[r]! * qScale * dots[r]! - (residuals[r]! * qNorm + norms[r]! * qResidual + SLACK);
      if (filled < k) {
        let i = filled++;
        heap[i] = lower;
        while (i > 0) {
          const parent = (i - 1) >> 1;
          if (heap[parent]! <= heap[i]!) break;
          [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
          i = parent;
        }
      } else if (lower > heap[0]!) {
        heap[0] = lower;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          const r2 = l + 1;
          let m = i;
          if (l < k && heap[l]! < heap[m]!) m = l;
          if (r2 < k && heap[r2]! < heap[m]!) m = r2;
          if (m === i) break;
          [heap[m], heap[i]] = [heap[i]!, heap[m]!];
          i = m;
        }
      }
    }
    return heap[0]!;
  }

  function exactScore(row: number): number {
    let sum = 0;
    const base = row * dim;
    for (let i = 0; i < dim; i++) sum += floats[base + i]! * unit[i]!;
    return sum;
  }

  return index;
}
