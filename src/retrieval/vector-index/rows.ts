import { instantiateKernel, type Kernel } from './kernel.ts';
import { quantise, roundUp32 } from './quantise.ts';

// Where the rows live. Each row is kept twice: int8 in the kernel's WebAssembly memory (interleaved in groups of
// four, see kernel.wat) for the approximate pass over everything, and float32 in JS for exact scores of the few
// rows that pass. Per row also the quantisation scale, ‖x − x̂‖ and ‖x̂‖ (float32, rounded up), for the bound.

const PAGE = 65536;
const BLOCK_ROWS = 4096; // float rows per JS block: growing never copies more than one block
const BLOCK_SHIFT = 12;
const ROW_LEVELS = 127; // -128 is never used, so every product and pair sum stays in range

export type RowStore = {
  /** Bytes held: the kernel's memory, the float blocks and the per-row bounds. */
  readonly bytes: number;
  /** Integer steps of the query (query values in [-queryLevels, queryLevels]); fixed by the stride. */
  readonly queryLevels: number;
  readonly scale: Float32Array;
  readonly residual: Float32Array;
  readonly norm: Float32Array;
  reserve(rows: number): void;
  /** Stores the unit vector `unit` as row `row` (row < capacity). */
  write(row: number, unit: Float64Array): void;
  /** Exact integer dot products of `queryInts` (from `quantise(…, queryLevels, …)`) with rows 0..rows-1. */
  dots(queryInts: Int16Array, rows: number): Int32Array;
  /** The exact score: float64 sum, in order, of the stored float32 row times the unit query. */
  exact(row: number, unit: Float64Array): number;
};

/**
 * The query's integer range for `dim` dimensions: as fine as i16 allows, while no i32 in the kernel can overflow
 * (stride·127·levels < 2^31). 22 017 at 768 dimensions, so the query's own rounding barely widens the bound.
 */
export function queryLevelsFor(dim: number): number {
  return Math.min(32767, Math.floor((2 ** 31 - 1) / (Math.ceil(dim / 16) * 16 * ROW_LEVELS)));
}

export function createRowStore(module: WebAssembly.Module, dim: number): RowStore {
  const stride = Math.ceil(dim / 16) * 16;
  const rowsAt = Math.ceil((2 * stride) / 64) * 64; // after the i16 query
  const queryLevels = queryLevelsFor(dim);
  if (queryLevels < 1) throw new RangeError(`dimension ${dim} is too large for the index`);

  const kernel: Kernel = instantiateKernel(module);
  let capacity = 0;
  let bytes8 = new Int8Array(kernel.memory.buffer);
  let scale = new Float32Array(0);
  let residual = new Float32Array(0);
  let norm = new Float32Array(0);
  const blocks: Float32Array[] = [];
  const ints = new Int8Array(stride);

  const outAt = () => rowsAt + capacity * stride;
  const grown = (old: Float32Array, length: number) => {
    const fresh = new Float32Array(length);
    fresh.set(old);
    return fresh;
  };

  /** Float blocks for `rows` rows; the last block doubles up to BLOCK_ROWS, so the slack stays below one block. */
  function reserveFloats(rows: number) {
    for (let b = 0; b * BLOCK_ROWS < rows; b++) {
      const need = Math.min(BLOCK_ROWS, rows - b * BLOCK_ROWS);
      const block = blocks[b];
      const have = block ? block.length / dim : 0;
      if (have < need) blocks[b] = grown(block ?? new Float32Array(0), Math.min(BLOCK_ROWS, Math.max(need, have * 2)) * dim);
    }
  }

  const store: RowStore = {
    get bytes() {
      return kernel.memory.buffer.byteLength + blocks.reduce((n, b) => n + b.byteLength, 0) + capacity * 12;
    },
    queryLevels,
    get scale() {
      return scale;
    },
    get residual() {
      return residual;
    },
    get norm() {
      return norm;
    },
    reserve(rows) {
      if (rows > capacity) {
        const next = Math.ceil(Math.max(rows, capacity * 2, 16) / 4) * 4; // whole groups of four
        const needed = rowsAt + next * stride + next * 4; // query, rows, one i32 result per row
        const have = kernel.memory.buffer.byteLength;
        try {
          if (needed > have) kernel.memory.grow(Math.ceil((needed - have) / PAGE));
        } catch (error) {
          throw new RangeError(`the index cannot grow to ${rows} rows of dimension ${dim}: ${(error as Error).message}`);
        }
        bytes8 = new Int8Array(kernel.memory.buffer);
        scale = grown(scale, next);
        residual = grown(residual, next);
        norm = grown(norm, next);
        capacity = next;
      }
      reserveFloats(rows);
    },
    write(row, unit) {
      const block = blocks[row >> BLOCK_SHIFT]!;
      const base = (row & (BLOCK_ROWS - 1)) * dim;
      for (let i = 0; i < dim; i++) block[base + i] = unit[i]!;
      // quantise what is stored (the float32 row), so the bound holds for the values exact() reads
      const q = quantise(block.subarray(base, base + dim), dim, ROW_LEVELS, ints);
      const group = rowsAt + (row >> 2) * 4 * stride + (row & 3) * 16;
      for (let j = 0; j < stride; j++) bytes8[group + ((j >> 4) << 6) + (j & 15)] = ints[j]!;
      scale[row] = q.scale;
      residual[row] = roundUp32(q.residual);
      norm[row] = roundUp32(q.norm);
    },
    dots(queryInts, rows) {
      new Int16Array(kernel.memory.buffer, 0, stride).set(queryInts);
      const groups = Math.ceil(rows / 4);
      kernel.dots(0, rowsAt, groups, stride, outAt());
      return new Int32Array(kernel.memory.buffer, outAt(), rows);
    },
    exact(row, unit) {
      const block = blocks[row >> BLOCK_SHIFT]!;
      const base = (row & (BLOCK_ROWS - 1)) * dim;
      let sum = 0;
      for (let i = 0; i < dim; i++) sum += block[base + i]! * unit[i]!;
      return sum;
    },
  };
  return store;
}
