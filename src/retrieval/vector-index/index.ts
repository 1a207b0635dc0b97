import { kernelModule } from './kernel.ts';
import { checkVector, normaliseInto, unitRow } from './quantise.ts';
import { bestExact } from './rank.ts';
import { createRowStore, type RowStore } from './rows.ts';

export { createStoredIndex, type Pruning, type StoredHit, type StoredIndex } from './stored.ts';
export { CODE_HEADER, encodeRow, unitRow } from './quantise.ts';

// Exact top-k by cosine similarity, fast, with every row held in memory (a collection's copy keeps only the int8
// rows in memory and reads the float rows from the database: stored.ts). An integer SIMD pass scores every row approximately with a proven error
// bound; only rows that could still be in the top k are scored exactly (rank.ts has the argument). The answer is
// the one an exact scan gives: score = Σ row[i]·query[i] in float64, in order, where the row is v/‖v‖ rounded to
// float32 and the query is q/‖q‖ in float64; equal scores keep insertion order.

export type Hit = { id: string; score: number };

export interface VectorIndex {
  readonly dim: number;
  readonly size: number;
  /** Bytes held for the vectors: int8 and float32 copies, per-row bounds, and the kernel's scratch. */
  readonly bytes: number;
  /** Appends a batch; vectors are normalised to length 1. Checks the whole batch before storing any of it. */
  add(ids: readonly string[], vectors: readonly (Float32Array | readonly number[])[]): void;
  /** The k most similar rows, highest score first; equal scores in insertion order. */
  search(query: Float32Array | readonly number[], k: number): Hit[];
  /** Removes every row and gives the memory back. */
  clear(): void;
  /** Searches answered (non-empty) and rows scored exactly by them, since creation: the filter's effectiveness. */
  readonly stats: { readonly searches: number; readonly reranked: number };
}

/**
 * An empty index for vectors of `dim` components; the first call in a process assembles the SIMD kernel.
 * `relaxed: false` keeps to the portable kernel where the engine has relaxed SIMD (to compare the two).
 */
export async function createVectorIndex(dim: number, opts: { relaxed?: boolean } = {}): Promise<VectorIndex> {
  if (!Number.isInteger(dim) || dim < 1) throw new RangeError(`dimension must be a positive integer, got ${dim}`);
  const module = await kernelModule();
  let rows: RowStore = createRowStore(module, dim, opts);
  let floats = createFloatRows(dim);
  let ids: string[] = [];
  const unit = new Float64Array(dim);
  const stats = { searches: 0, reranked: 0 };

  return {
    dim,
    get size() {
      return ids.length;
    },
    get bytes() {
      return rows.bytes + floats.bytes;
    },
    get stats() {
      return { ...stats };
    },
    add(newIds, vectors) {
      if (newIds.length !== vectors.length) {
        throw new RangeError(`got ${newIds.length} ids for ${vectors.length} vectors`);
      }
      vectors.forEach((v, n) => {
        checkVector(v, dim, `vector ${n} (id ${newIds[n]})`);
      });
      const first = ids.length;
      rows.reserve(first + vectors.length);
      floats.reserve(first + vectors.length);
      for (let n = 0; n < vectors.length; n++) {
        const row = floats.row(first + n);
        unitRow(vectors[n]!, dim, unit, row);
        rows.write(first + n, row);
      }
      for (const id of newIds) ids.push(id);
    },
    search(query, k) {
      if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
      checkVector(query, dim, 'query');
      normaliseInto(query, dim, unit);
      const size = ids.length;
      const want = Math.min(k, size);
      if (want === 0) return [];
      const found = rows.candidates(unit, size, want);
      if (!found) return ids.slice(0, want).map((id) => ({ id, score: 0 })); // a zero query scores 0 everywhere
      stats.searches += 1;
      stats.reranked += found.rows.length;
      return bestExact(found.rows, (row) => floats.exact(row, unit), want).map(({ row, score }) => ({ id: ids[row]!, score }));
    },
    clear() {
      rows = createRowStore(module, dim, opts);
      floats = createFloatRows(dim);
      ids = [];
    },
  };
}

const BLOCK_ROWS = 4096; // float rows per block: growing never copies more than one block
const BLOCK_SHIFT = 12;

/** The float32 unit rows, in blocks; the last block doubles up to BLOCK_ROWS, so the slack stays below one block. */
function createFloatRows(dim: number) {
  const blocks: Float32Array[] = [];
  return {
    get bytes() {
      return blocks.reduce((n, b) => n + b.byteLength, 0);
    },
    reserve(rows: number) {
      for (let b = 0; b * BLOCK_ROWS < rows; b++) {
        const need = Math.min(BLOCK_ROWS, rows - b * BLOCK_ROWS);
        const block = blocks[b];
        const have = block ? block.length / dim : 0;
        if (have < need) {
          const fresh = new Float32Array(Math.min(BLOCK_ROWS, Math.max(need, have * 2)) * dim);
          if (block) fresh.set(block);
          blocks[b] = fresh;
        }
      }
    },
    row(row: number): Float32Array {
      const base = (row & (BLOCK_ROWS - 1)) * dim;
      return blocks[row >> BLOCK_SHIFT]!.subarray(base, base + dim);
    },
    /** The exact score: float64 sum, in order, of the stored float32 row times the unit query. */
    exact(row: number, unit: Float64Array): number {
      const block = blocks[row >> BLOCK_SHIFT]!;
      const base = (row & (BLOCK_ROWS - 1)) * dim;
      let sum = 0;
      for (let i = 0; i < dim; i++) sum += block[base + i]! * unit[i]!;
      return sum;
    },
  };
}
