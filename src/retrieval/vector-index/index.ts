import { kernelModule } from './kernel.ts';
import { checkVector, normaliseInto, quantise } from './quantise.ts';
import { bestExact, candidates } from './rank.ts';
import { createRowStore, type RowStore } from './rows.ts';

// Exact top-k by cosine similarity, fast. An integer SIMD pass scores every row approximately with a proven error
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

/** An empty index for vectors of `dim` components; the first call in a process assembles the SIMD kernel. */
export async function createVectorIndex(dim: number): Promise<VectorIndex> {
  if (!Number.isInteger(dim) || dim < 1) throw new RangeError(`dimension must be a positive integer, got ${dim}`);
  const module = await kernelModule();
  let rows: RowStore = createRowStore(module, dim);
  let ids: string[] = [];
  const unit = new Float64Array(dim);
  const queryInts = new Int16Array(Math.ceil(dim / 16) * 16);
  const stats = { searches: 0, reranked: 0 };

  return {
    dim,
    get size() {
      return ids.length;
    },
    get bytes() {
      return rows.bytes;
    },
    get stats() {
      return { ...stats };
    },
    add(newIds, vectors) {
      if (newIds.length !== vectors.length) {
        throw new RangeError(`got ${newIds.length} ids for ${vectors.length} vectors`);
      }
      vectors.forEach((v, n) => checkVector(v, dim, `vector ${n} (id ${newIds[n]})`));
      const first = ids.length;
      rows.reserve(first + vectors.length);
      for (let n = 0; n < vectors.length; n++) {
        normaliseInto(vectors[n]!, dim, unit);
        rows.write(first + n, unit);
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
      const q = quantise(unit, dim, rows.queryLevels, queryInts);
      if (q.scale === 0) return ids.slice(0, want).map((id) => ({ id, score: 0 })); // a zero query scores 0 everywhere
      let length = 0;
      for (let i = 0; i < dim; i++) length += unit[i]! * unit[i]!;
      const dots = rows.dots(queryInts, size);
      const found = candidates(dots, rows, { scale: q.scale, residual: q.residual, length: Math.sqrt(length) }, size, want);
      stats.searches += 1;
      stats.reranked += found.length;
      return bestExact(found, (row) => rows.exact(row, unit), want).map(({ row, score }) => ({ id: ids[row]!, score }));
    },
    clear() {
      rows = createRowStore(module, dim);
      ids = [];
    },
  };
}
