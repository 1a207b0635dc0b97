import { kernelModule } from './kernel.ts';
import { checkVector, CODE_HEADER, normaliseInto, unitRow } from './quantise.ts';
import { createRowStore } from './rows.ts';

// A collection's copy: only the int8 rows and their bounds in memory (792 bytes a row at 768 dimensions, so a
// million rows fit in under 1 GiB); the float rows stay in the database, and a search reads the few it must score
// exactly. The answer is the one index.ts gives with every float row in memory: the same bound picks the same
// candidates, and each is scored from the stored vector exactly as index.ts stores it (v/‖v‖ rounded to float32).
// Candidates are read best upper bound first, a batch at a time, until the k-th exact score so far reaches the
// next one's upper bound: no row left can then enter the top k.

const FETCH_BATCH = 128;

/** A stored row as the caller reads it back: its sequence number, its vector as stored, and what to answer with. */
export type Fetched<T> = { seq: number; vector: Float32Array; item: T };
export type StoredHit<T> = { seq: number; score: number; item: T };

export interface StoredIndex {
  readonly dim: number;
  readonly size: number;
  /** Bytes held: the kernel's memory (int8 rows, query, results), per-row bounds and sequence numbers. */
  readonly bytes: number;
  /** Room for `rows` rows in all, so a load of known size grows the memory once. */
  reserve(rows: number): void;
  /** Appends a row from its code (encodeRow); sequence numbers must ascend. */
  addCode(seq: number, code: Uint8Array): void;
  /** Appends a row from its vector as stored (a chunk kept without a code). */
  addVector(seq: number, vector: Float32Array): void;
  /**
   * The k most similar rows, highest score first, equal scores in sequence order. `fetch` reads the given rows
   * back (any it no longer finds are left out of the answer).
   */
  search<T>(query: Float32Array | readonly number[], k: number, fetch: (seqs: number[]) => Promise<Fetched<T>[]>): Promise<StoredHit<T>[]>;
  /** Searches answered (non-empty) and rows read back to be scored exactly. */
  readonly stats: { readonly searches: number; readonly fetched: number };
}

/** `relaxed: false` keeps to the portable kernel where the engine has relaxed SIMD (to compare the two). */
export async function createStoredIndex(dim: number, opts: { relaxed?: boolean } = {}): Promise<StoredIndex> {
  if (!Number.isInteger(dim) || dim < 1) throw new RangeError(`dimension must be a positive integer, got ${dim}`);
  const rows = createRowStore(await kernelModule(), dim, opts);
  let seqs = new Float64Array(0);
  let size = 0;
  const unit = new Float64Array(dim);
  const scratch = new Float64Array(dim);
  const row32 = new Float32Array(dim);
  const stats = { searches: 0, fetched: 0 };

  function reserve(total: number) {
    if (total <= seqs.length) return;
    rows.reserve(total);
    const next = new Float64Array(Math.max(total, seqs.length * 2, 16));
    next.set(seqs.subarray(0, size));
    seqs = next;
  }
  function next(seq: number) {
    if (size > 0 && seq <= seqs[size - 1]!)
      throw new RangeError(`rows must come in ascending sequence order: ${seq} after ${seqs[size - 1]}`);
    reserve(size + 1);
    seqs[size] = seq;
    return size++;
  }
  /** Exactly what index.ts scores: Σ float32(v/‖v‖)[i] · q[i] in float64, in order. */
  function exact(vector: Float32Array): number {
    checkVector(vector, dim, 'a stored vector');
    unitRow(vector, dim, scratch, row32);
    let sum = 0;
    for (let i = 0; i < dim; i++) sum += row32[i]! * unit[i]!;
    return sum;
  }

  return {
    dim,
    get size() {
      return size;
    },
    get bytes() {
      return rows.bytes + seqs.byteLength;
    },
    get stats() {
      return { ...stats };
    },
    reserve,
    addCode(seq, code) {
      if (code.length !== CODE_HEADER + dim) throw new RangeError(`a row code of ${code.length} bytes does not hold ${dim} dimensions`);
      const row = next(seq);
      rows.writeCode(row, code);
    },
    addVector(seq, vector) {
      checkVector(vector, dim, `the vector of row ${seq}`);
      const row = next(seq);
      rows.write(row, unitRow(vector, dim, scratch, row32));
    },
    async search(query, k, fetch) {
      if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
      checkVector(query, dim, 'query');
      normaliseInto(query, dim, unit);
      const want = Math.min(k, size);
      if (want === 0) return [];
      const found = rows.candidates(unit, size, want);
      if (!found) {
        // a zero query scores 0 everywhere: the first rows
        const first = Array.from(seqs.subarray(0, want));
        const found = new Map((await fetch(first)).map((f) => [f.seq, f]));
        return first.flatMap((seq) => (found.has(seq) ? [{ seq, score: 0, item: found.get(seq)!.item }] : []));
      }
      stats.searches += 1;

      const order = found.rows.map((_, i) => i).sort((a, b) => found.upper[b]! - found.upper[a]! || found.rows[a]! - found.rows[b]!);
      const best: { row: number; score: number; seq: number; item: unknown }[] = [];
      const rowOf = new Map<number, number>();
      for (let at = 0; at < order.length; ) {
        // a row's exact score lies below its upper bound: once the k-th best reaches the next bound, nothing left can enter
        if (best.length === want && found.upper[order[at]!]! <= best[want - 1]!.score) break;
        const batch = order.slice(at, at + FETCH_BATCH).map((i) => found.rows[i]!);
        at += batch.length;
        rowOf.clear();
        for (const row of batch) rowOf.set(seqs[row]!, row);
        const fetched = await fetch(batch.map((row) => seqs[row]!));
        stats.fetched += fetched.length;
        for (const f of fetched) {
          const row = rowOf.get(f.seq);
          if (row === undefined) continue;
          const hit = { row, score: exact(f.vector), seq: f.seq, item: f.item };
          let i = best.length;
          while (i > 0 && (best[i - 1]!.score < hit.score || (best[i - 1]!.score === hit.score && best[i - 1]!.row > row))) i--;
          if (i < want) {
            best.splice(i, 0, hit);
            if (best.length > want) best.pop();
          }
        }
      }
      return best.map(({ seq, score, item }) => ({ seq, score, item: item as never }));
    },
  };
}
