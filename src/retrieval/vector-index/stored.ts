import { buildClusters, type Clusters } from './clusters.ts';
import { kernelModule } from './kernel.ts';
import { checkVector, CODE_HEADER, normaliseInto, unitRow } from './quantise.ts';
import { createRowStore } from './rows.ts';

// A collection's copy: only the int8 rows and their bounds in memory (792 bytes a row at 768 dimensions, so a
// million rows fit in under 1 GiB); the float rows stay in the database, and a search reads the few it must score
// exactly. The answer is the one index.ts gives with every float row in memory: the same bound picks the same
// candidates, and each is scored from the stored vector exactly as index.ts stores it (v/‖v‖ rounded to float32).
// Candidates are read best upper bound first, a batch at a time, until the k-th exact score so far reaches the
// next one's upper bound: no row left can then enter the top k.
// A copy of PRUNE_FROM rows or more is grouped into clusters once loaded (prepare(), clusters.ts), and a search then
// scans only the clusters whose bound reaches the k-th best so far, with the same candidates' proof: the answer is
// the full scan's, score for score. Rows are moved so that each cluster is contiguous, so ties are broken by
// sequence number, not by place.

const PRUNE_FROM = 20_000;
/** Rows appended since the clusters were built are scanned by every search; past this share of them, rebuild. */
const TAIL_SHARE = 0.25;

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
  search<T>(
    query: Float32Array | readonly number[],
    k: number,
    fetch: (seqs: number[]) => Promise<Fetched<T>[]>,
    opts?: SearchOptions,
  ): Promise<StoredHit<T>[]>;
  /** Searches answered (non-empty), rows read back to be scored exactly, rows the kernel scored, full scans. */
  readonly stats: { readonly searches: number; readonly fetched: number; readonly scanned: number; readonly fullScans: number };
  /**
   * Builds the clusters that let a search skip rows (when the copy has enough rows and none are built, or the rows
   * appended since are too many); a search is a full scan until then, and wherever the clusters are found useless.
   */
  prepare(): Pruning;
  readonly pruning: Pruning;
}

/** What the copy's clusters are: none yet or too few rows, built, or found not to prune (so never used). */
export type Pruning = {
  state: 'none' | 'built' | 'useless';
  leaves: number;
  /** Rows the clusters hold (the rest, appended since, are scanned by every search). */
  rows: number;
  bytes: number;
  buildMs: number;
  /** Share of the rows a top-10 search scanned in the build's probes. */
  probeShare: number;
};

export type SearchOptions = { /** Score every row (no clusters): the answer a search must equal. */ exhaustive?: boolean };

/** `relaxed: false` keeps to the portable kernel where the engine has relaxed SIMD (to compare the two). */
export async function createStoredIndex(dim: number, opts: { relaxed?: boolean; pruneFrom?: number } = {}): Promise<StoredIndex> {
  if (!Number.isInteger(dim) || dim < 1) throw new RangeError(`dimension must be a positive integer, got ${dim}`);
  const modules = await kernelModule();
  const rows = createRowStore(modules, dim, opts);
  const pruneFrom = opts.pruneFrom ?? PRUNE_FROM;
  let clusters: Clusters | undefined;
  let pruning: Pruning = { state: 'none', leaves: 0, rows: 0, bytes: 0, buildMs: 0, probeShare: 1 };
  let seqs = new Float64Array(0);
  let size = 0;
  const unit = new Float64Array(dim);
  const scratch = new Float64Array(dim);
  const row32 = new Float32Array(dim);
  const stats = { searches: 0, fetched: 0, scanned: 0, fullScans: 0 };

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
      return rows.bytes + seqs.byteLength + pruning.bytes;
    },
    get pruning() {
      return { ...pruning };
    },
    prepare() {
      const tried = pruning.state === 'none' ? 0 : pruning.rows;
      const due = pruning.state === 'built' ? size - tried > TAIL_SHARE * tried : size >= pruneFrom && size > (1 + TAIL_SHARE) * tried;
      if (!due || size < pruneFrom) return { ...pruning };
      const started = performance.now();
      clusters = undefined;
      const built = buildClusters(modules, rows, dim, size);
      if (built.order) seqs.set(Float64Array.from(built.order, (p) => seqs[p]!));
      const buildMs = performance.now() - started;
      if ('useless' in built) {
        pruning = { state: 'useless', leaves: 0, rows: size, bytes: 0, buildMs, probeShare: built.probeShare };
      } else {
        clusters = built.clusters;
        pruning = { state: 'built', leaves: clusters.leaves, rows: size, bytes: clusters.bytes, buildMs, probeShare: clusters.probeShare };
      }
      return { ...pruning };
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
    async search(query, k, fetch, searchOpts = {}) {
      if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
      checkVector(query, dim, 'query');
      normaliseInto(query, dim, unit);
      const want = Math.min(k, size);
      if (want === 0) return [];
      const pruned = clusters && !searchOpts.exhaustive ? clusters.candidates(unit, size, want) : undefined;
      const found = pruned ?? rows.candidates(unit, size, want);
      if (!found) {
        // a zero query scores 0 everywhere: the first rows in sequence order (rows may have been moved by the clusters)
        const first = Array.from(seqs.subarray(0, size))
          .sort((a, b) => a - b)
          .slice(0, want);
        const found = new Map((await fetch(first)).map((f) => [f.seq, f]));
        return first.flatMap((seq) => (found.has(seq) ? [{ seq, score: 0, item: found.get(seq)!.item }] : []));
      }
      stats.searches += 1;
      stats.scanned += pruned ? pruned.scanned : size;
      if (!pruned) stats.fullScans += 1;

      const order = found.rows
        .map((_, i) => i)
        .sort((a, b) => found.upper[b]! - found.upper[a]! || seqs[found.rows[a]!]! - seqs[found.rows[b]!]!);
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
          while (i > 0 && (best[i - 1]!.score < hit.score || (best[i - 1]!.score === hit.score && best[i - 1]!.seq > hit.seq))) i--;
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
