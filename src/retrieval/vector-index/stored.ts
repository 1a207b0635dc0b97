import { setImmediate as nextTurn } from 'node:timers/promises';
import { buildInBackground, type BackgroundBuild, type BuildResult } from './background-build.ts';
import { buildClusters } from './cluster-build.ts';
import { clustersFrom, type Clusters } from './clusters.ts';
import { kernelModule } from './kernel.ts';
import { checkVector, CODE_HEADER, normaliseInto, unitRow } from './quantise.ts';
import { createRefinement, type Refinement } from './refine.ts';
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
// The service builds them in the background (prepareInBackground(), background-build.ts): a worker thread groups a
// copy of the rows; its order is then copied into a new row store a block per turn, and swapped in between two
// searches (the rows appended meanwhile, the store, the clusters, in one synchronous step). Until then searches scan
// every row (or use the clusters built before), so no answer changes, and rows appended meanwhile are the new
// clusters' tail. A search reads the sequence numbers of its candidates before its first wait, so a swap while it
// reads rows back cannot mislead it.
// Once built, the caller may hand the rows' vectors to refine() (read from the database once): a finer code of the
// clusters' rows (refine.ts) narrows each candidate's interval, so a search reads back about 13 rows instead of about
// 70 at 100 000 clustered rows. Moving the rows drops it; rows without it keep the int8 bound.

const PRUNE_FROM = 20_000;
/** Rows appended since the clusters were built are scanned by every search; past this share of them, rebuild. */
const TAIL_SHARE = 0.25;

const FETCH_BATCH = 128;
/** Rows moved into a background build's new row store per turn of the event loop (1.5 MiB at 768 dimensions). */
const MOVE_ROWS = 2048;

/** Rows 0..count-1: row i's sequence number seqs[i], its code bytes[codeAt[i], codeAt[i] + codeLength[i]). */
export type CodeRows = {
  readonly count: number;
  readonly seqs: Float64Array;
  readonly bytes: Uint8Array;
  readonly codeAt: Int32Array;
  readonly codeLength: Int32Array;
};

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
  /** Appends rows from their codes, as addCode would one by one: a piece of a load at once (CodeRows). */
  addCodes(rows: CodeRows): void;
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
  /**
   * Searches answered (non-empty), rows read back to be scored exactly, rows the kernel scored, full scans; full
   * scans of which a worker thread took blocks (split.ts), on the rows as they are now stored.
   */
  readonly stats: {
    readonly searches: number;
    readonly fetched: number;
    readonly scanned: number;
    readonly fullScans: number;
    readonly workerRanges: number;
  };
  /**
   * Builds the clusters that let a search skip rows (when the copy has enough rows and none are built, or the rows
   * appended since are too many); a search is a full scan until then, and wherever the clusters are found useless.
   */
  prepare(): Pruning;
  /**
   * prepare()'s build on a worker thread, when one is due: the answer is swapped in between two searches once the
   * thread has it, and until then searches go on as before (a full scan, or the clusters built before). Rejects when
   * the thread fails (the copy then tries no more builds and keeps scanning as before). One build at a time per copy.
   */
  prepareInBackground(): Promise<Pruning>;
  /**
   * Gives rows' float vectors as stored (the caller reads them once, in any order) to the clusters' finer code
   * (refine.ts), so that searches read back fewer candidates; rows not among the clusters' are passed over. False
   * when there are no clusters to refine (none built, or being rebuilt after a move): the caller stops reading.
   */
  refine(rows: readonly { seq: number; vector: Float32Array }[]): boolean;
  /**
   * Stops a build under way and any later one, and lets the pass's workers go of the rows (so they are freed once the
   * copy is dropped): for a copy replaced or dropped (searches on it still answer, on this thread).
   */
  release(): void;
  /** Threads a full scan is split across now (1: this thread alone). */
  readonly threads: number;
  /** Reads every row once, split as a full scan is, doing nothing else: the floor of a full scan (benchmarks). */
  readAll(): number;
  readonly pruning: Pruning;
}

/**
 * What the copy's clusters are: none yet or too few rows, built, found not to prune (so never used), or being built
 * in the background (then `rows` are the rows being grouped, the rest describes the clusters serving meanwhile, if any).
 */
export type Pruning = {
  state: 'none' | 'building' | 'built' | 'useless';
  leaves: number;
  /** Rows the clusters hold (the rest, appended since, are scanned by every search). */
  rows: number;
  bytes: number;
  /** The last build's time, from its start to the swap (in the background: while searches went on). */
  buildMs: number;
  /**
   * Of buildMs, the time the thread that answers requests was held: all of it for prepare(); in the background, the
   * rows' copy to the worker and the swap.
   */
  heldMs: number;
  /** The longest of those holds: what a question arriving meanwhile may wait (all of buildMs for prepare()). */
  pauseMs: number;
  /** Share of the rows a top-10 search scanned in the build's probes. */
  probeShare: number;
  /** Rows of the clusters holding a finer code (refine()); 0 until the caller reads their vectors. */
  refined: number;
};

export type SearchOptions = { /** Score every row (no clusters): the answer a search must equal. */ exhaustive?: boolean };

/** `relaxed: false` keeps to the portable kernel where the engine has relaxed SIMD (to compare the two). */
/** `split: false` keeps every pass on this thread; `threads` overrides the count of cores a pass is split across. */
export async function createStoredIndex(
  dim: number,
  opts: { relaxed?: boolean; pruneFrom?: number; split?: boolean; threads?: number } = {},
): Promise<StoredIndex> {
  if (!Number.isInteger(dim) || dim < 1) throw new RangeError(`dimension must be a positive integer, got ${dim}`);
  const modules = await kernelModule();
  // a copy's pass is split across the cores once it is large enough (rows.ts, split.ts)
  const storeOpts = { ...opts, split: opts.split ?? true };
  let rows = createRowStore(modules, dim, storeOpts);
  const pruneFrom = opts.pruneFrom ?? PRUNE_FROM;
  let clusters: Clusters | undefined;
  let pruning: Omit<Pruning, 'refined'> = { state: 'none', leaves: 0, rows: 0, bytes: 0, buildMs: 0, heldMs: 0, pauseMs: 0, probeShare: 1 };
  /** The clusters' finer code, with each row's place by sequence number; dropped whenever rows move. */
  let refinement: { code: Refinement; ascending: Float64Array; placeOf: Int32Array } | undefined;
  let building: { rows: number; background: BackgroundBuild; answer: Promise<Pruning> } | undefined;
  /** Bumped whenever rows move: a background answer measured on rows since moved is dropped. */
  let moves = 0;
  let stopped = false;
  let seqs = new Float64Array(0);
  let size = 0;
  const unit = new Float64Array(dim);
  const scratch = new Float64Array(dim);
  const row32 = new Float32Array(dim);
  const stats = { searches: 0, fetched: 0, scanned: 0, fullScans: 0 };

  function reserve(total: number) {
    if (total <= seqs.length) return;
    // the rows' room as large as the sequence numbers': a row is appended without asking the store again until
    // seqs is full (reserving `total` rows alone left the store short once seqs had doubled past it)
    const room = Math.max(total, seqs.length * 2, 16);
    rows.reserve(room);
    const next = new Float64Array(room);
    next.set(seqs.subarray(0, size));
    seqs = next;
  }
  /** Whether a build is due: the copy is large enough and never tried, or has grown enough since. */
  function due(): boolean {
    const tried = pruning.state === 'none' ? 0 : pruning.rows;
    const grown = pruning.state === 'built' ? size - tried > TAIL_SHARE * tried : size > (1 + TAIL_SHARE) * tried;
    return grown && size >= pruneFrom;
  }
  function current(): Pruning {
    const refined = refinement?.code.filled ?? 0;
    return building ? { ...pruning, state: 'building', rows: building.rows, refined } : { ...pruning, refined };
  }
  /** The place of the row of sequence number `seq` among the refined rows, or -1 (a row appended since). */
  function placeOf(seq: number, of: NonNullable<typeof refinement>): number {
    const at = rankOf(of.ascending, seq);
    return at < of.ascending.length && of.ascending[at] === seq ? of.placeOf[at]! : -1;
  }
  function cancelBuild() {
    building?.background.cancel();
    building = undefined;
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
      return (
        rows.bytes +
        seqs.byteLength +
        pruning.bytes +
        (refinement ? refinement.code.bytes + refinement.ascending.byteLength + refinement.placeOf.byteLength : 0)
      );
    },
    get pruning() {
      return current();
    },
    prepare() {
      if (!due()) return current();
      cancelBuild();
      const started = performance.now();
      clusters = undefined;
      refinement = undefined;
      const built = buildClusters(modules, rows, dim, size);
      if (built.order) {
        seqs.set(Float64Array.from(built.order, (p) => seqs[p]!));
        moves += 1;
        refinement = undefined;
      }
      const buildMs = performance.now() - started;
      if ('useless' in built) {
        pruning = {
          state: 'useless',
          leaves: 0,
          rows: size,
          bytes: 0,
          buildMs,
          heldMs: buildMs,
          pauseMs: buildMs,
          probeShare: built.probeShare,
        };
      } else {
        clusters = built.clusters;
        const { leaves, bytes, probeShare } = clusters;
        pruning = { state: 'built', leaves, rows: size, bytes, buildMs, heldMs: buildMs, pauseMs: buildMs, probeShare };
      }
      return current();
    },
    prepareInBackground() {
      if (building) return building.answer;
      if (stopped || !due()) return Promise.resolve(current());
      const count = size;
      const movesAtStart = moves;
      const started = performance.now();
      const background = buildInBackground(modules, rows, dim, count, opts.relaxed);
      /** Cancelled, or prepare() built meanwhile: the answer is dropped. */
      const stale = () => building?.background !== background || moves !== movesAtStart;
      const swap = async (result: BuildResult | undefined): Promise<Pruning> => {
        if (!result || stale()) return current(); // cancelled, or prepare() built meanwhile
        let heldMs = background.heldMs;
        let pauseMs = background.pauseMs;
        if ('useless' in result) {
          building = undefined;
          clusters = undefined;
          const buildMs = performance.now() - started;
          pruning = { state: 'useless', leaves: 0, rows: count, bytes: 0, buildMs, heldMs, pauseMs, probeShare: result.probeShare };
          return current();
        }
        // rows 0..count-1 into a new row store in the thread's order, a block per turn while searches go on with the
        // old one (moving them in place would hold this thread for the whole copy: 0.3 s at 100 000 rows)
        const moved = createRowStore(modules, dim, storeOpts);
        moved.reserve(seqs.length); // as many as the sequence numbers have room for (reserve() goes by them)
        for (let from = 0; from < count; from += MOVE_ROWS) {
          if (stale()) return current();
          const t = performance.now();
          for (let p = from; p < Math.min(count, from + MOVE_ROWS); p++) moved.copyRow(rows, result.order[p]!, p);
          heldMs += performance.now() - t;
          pauseMs = Math.max(pauseMs, performance.now() - t);
          await nextTurn();
        }
        if (stale()) return current();
        // the swap, in one synchronous step: the rows appended meanwhile (the new clusters' tail), the new store, the
        // sequence numbers in its order, the clusters
        const t = performance.now();
        building = undefined;
        moved.reserve(seqs.length);
        for (let r = count; r < size; r++) moved.copyRow(rows, r, r);
        rows.release(); // its memory goes back once dropped (a shared one is not collected unasked: split.ts)
        rows = moved;
        seqs.set(Float64Array.from(result.order, (p) => seqs[p]!));
        moves += 1;
        refinement = undefined;
        clusters = clustersFrom(modules, rows, dim, result.layout);
        const now = performance.now();
        const { leaves, bytes, probeShare } = clusters;
        heldMs += now - t;
        pauseMs = Math.max(pauseMs, now - t);
        pruning = { state: 'built', leaves, rows: count, bytes, buildMs: now - started, heldMs, pauseMs, probeShare };
        return current();
      };
      const answer = background.done.then(swap, (error: unknown) => {
        if (building?.background === background) {
          building = undefined;
          stopped = true; // a thread that failed once would most likely fail again: scan as before
        }
        throw error;
      });
      building = { rows: count, background, answer };
      return answer;
    },
    refine(given) {
      if (!clusters) return false;
      if (!refinement) {
        const count = clusters.rows;
        const ascending = Float64Array.from(seqs.subarray(0, count)).sort();
        const places = new Int32Array(count);
        for (let p = 0; p < count; p++) places[rankOf(ascending, seqs[p]!)] = p;
        refinement = { code: createRefinement(rows, dim, count), ascending, placeOf: places };
      }
      for (const { seq, vector } of given) {
        const place = placeOf(seq, refinement);
        if (place < 0) continue;
        checkVector(vector, dim, `the vector of row ${seq}`);
        refinement.code.set(place, unitRow(vector, dim, scratch, row32));
      }
      return true;
    },
    release() {
      stopped = true;
      refinement = undefined;
      cancelBuild();
      rows.release();
    },
    get threads() {
      return rows.threads(size);
    },
    readAll() {
      return rows.readAll(size);
    },
    get stats() {
      return { ...stats, workerRanges: rows.workerRanges };
    },
    reserve,
    addCode(seq, code) {
      if (code.length !== CODE_HEADER + dim) throw new RangeError(`a row code of ${code.length} bytes does not hold ${dim} dimensions`);
      const row = next(seq);
      rows.writeCode(row, code);
    },
    addCodes({ count, seqs: given, bytes, codeAt, codeLength }) {
      let last = size > 0 ? seqs[size - 1]! : Number.NEGATIVE_INFINITY;
      for (let i = 0; i < count; i++) {
        if (codeLength[i] !== CODE_HEADER + dim)
          throw new RangeError(`a row code of ${codeLength[i]} bytes does not hold ${dim} dimensions`);
        if (given[i]! <= last) throw new RangeError(`rows must come in ascending sequence order: ${given[i]} after ${last}`);
        if (codeAt[i]! < 0 || codeAt[i]! + codeLength[i]! > bytes.length) throw new RangeError(`row ${given[i]} has no code in the block`);
        last = given[i]!;
      }
      reserve(size + count);
      seqs.set(given.subarray(0, count), size);
      rows.writeCodes(size, bytes, codeAt, count);
      size += count;
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
      const pruned = clusters && !searchOpts.exhaustive ? clusters.candidates(unit, size, want, refinement?.code) : undefined;
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

      // by sequence number from here on: a background build's swap may move rows while this search waits
      const seqOf = found.rows.map((row) => seqs[row]!);
      const order = found.rows.map((_, i) => i).sort((a, b) => found.upper[b]! - found.upper[a]! || seqOf[a]! - seqOf[b]!);
      const best: { score: number; seq: number; item: unknown }[] = [];
      const asked = new Set<number>();
      for (let at = 0; at < order.length; ) {
        // a row's exact score lies below its upper bound: once the k-th best reaches the next bound, nothing left can enter
        if (best.length === want && found.upper[order[at]!]! <= best[want - 1]!.score) break;
        const batch = order.slice(at, at + FETCH_BATCH).map((i) => seqOf[i]!);
        at += batch.length;
        asked.clear();
        for (const seq of batch) asked.add(seq);
        const fetched = await fetch(batch);
        stats.fetched += fetched.length;
        for (const f of fetched) {
          if (!asked.has(f.seq)) continue;
          const hit = { score: exact(f.vector), seq: f.seq, item: f.item };
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

/** The first index of the ascending `sorted` whose value is not below `value`. */
function rankOf(sorted: Float64Array, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
