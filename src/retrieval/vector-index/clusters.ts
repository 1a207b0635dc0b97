import type { KernelModules } from './kernel.ts';
import { createFloor, SLACK } from './rank.ts';
import type { Refinement } from './refine.ts';
import { createRowStore, type RowStore } from './rows.ts';

// A pruning index over a copy's rows: the rows are grouped into clusters (leaves), each one contiguous run of rows,
// with a centroid c and a radius r ≥ ‖x − c‖ for every member x as exact scores read it (the float32 unit row). Then
//   x·q = c·q + (x − c)·q ≤ c·q + r·‖q‖   (Cauchy–Schwarz)
// bounds every member's exact score, c·q itself bounded above by the int8 argument of rank.ts (the centroids are
// rows of a small store of their own). A search scans the rows appended since the build (the tail) and then the
// leaves best bound first, keeping rank.ts's floor (the k-th largest lower bound of the rows scanned), and stops at
// the first leaf whose bound is below the floor: every row of that leaf and of the leaves after it scores strictly
// less than k rows already scanned, so it cannot be in the top k whatever the tie-break. The rows kept are exactly
// those a full scan would still have to score (rank.ts), so the answer is the full scan's, score for score.
// The radius is proven from the row's code: ‖x − c‖ ≤ ‖x̂ − c‖ + ‖x − x̂‖, the second term the stored residual, the
// first from the expansion ‖x̂‖² − 2 x̂·c + ‖c‖² with x̂·c bounded below by the integer kernel (the same argument).
// The grouping itself is cluster-build.ts's; this file is the index a grouping gives, and its search.

export type Clusters = {
  /** Leaves, and the rows 0..rows-1 they hold; rows after them are the tail, scanned by every search. */
  readonly leaves: number;
  readonly rows: number;
  readonly bytes: number;
  /** Rows scored by the kernel in the probe searches, over the rows they had: the index's use on its own rows. */
  readonly probeShare: number;
  /**
   * Candidates as rank.ts's `candidates` gives them, for rows 0..size-1; undefined for a zero query. `refined`: a
   * finer code of the rows (refine.ts), whose narrower intervals then drop the rows kept that k others outscore.
   */
  candidates(
    unit: Float64Array,
    size: number,
    k: number,
    refined?: Refinement,
  ): { rows: number[]; upper: number[]; scanned: number } | undefined;
};

/**
 * What a build found, without the rows: where each leaf starts (and, last, the rows they hold), the centroids
 * (leaves × dim float32) and the proven radii. A thread that built it on its own copy of the rows hands it back
 * (build-thread.ts), and clustersFrom() makes the index over the caller's rows once they are moved alike.
 */
export type Layout = {
  starts: Int32Array<ArrayBuffer>;
  centroids: Float32Array<ArrayBuffer>;
  radius: Float64Array<ArrayBuffer>;
  probeShare: number;
};

/**
 * The index the layout describes over rows 0..starts[leaves]-1 of `store`, which must hold the rows the layout was
 * measured on, in its order (the radii are proofs about those very codes).
 */
export function clustersFrom(modules: KernelModules, store: RowStore, dim: number, layout: Layout): Clusters {
  const { starts, radius } = layout;
  const leaves = starts.length - 1;
  const rows = starts[leaves]!;
  const centroids = createRowStore(modules, dim);
  centroids.reserve(leaves);
  for (let l = 0; l < leaves; l++) centroids.write(l, layout.centroids.subarray(l * dim, (l + 1) * dim));
  const bound = new Float64Array(leaves);
  const heap = new Int32Array(leaves);
  return {
    leaves,
    rows,
    bytes: centroids.bytes + radius.byteLength + bound.byteLength + heap.byteLength + starts.byteLength,
    probeShare: layout.probeShare,
    candidates(unit, size, k, refined) {
      // the store's bounds as they are now: a store that grew since (rows appended) holds them in new arrays
      const { scale, residual, norm } = store;
      const query = store.setQuery(unit);
      if (!query || !centroids.setQuery(unit)) return undefined;
      const { scale: qScale, residual: qResidual, length: qLength } = query;
      const cDots = centroids.fineDots(0, leaves);
      for (let l = 0; l < leaves; l++) {
        const upper = cDots[l]! * centroids.scale[l]! * qScale + centroids.residual[l]! * qLength + centroids.norm[l]! * qResidual;
        bound[l] = upper + radius[l]! * qLength + 2 * SLACK;
      }
      const floor = createFloor(k);
      const kept: number[] = [];
      const keptUpper: number[] = [];
      const keptApprox: number[] = [];
      let scanned = 0;
      const scan = (from: number, to: number) => {
        if (to <= from) return;
        scanned += to - from;
        const dots = store.fineDots(from, to);
        for (let r = from; r < to; r++) {
          const approx = dots[r]! * scale[r]! * qScale;
          const error = residual[r]! * qLength + norm[r]! * qResidual + SLACK;
          floor.offer(approx - error);
          if (approx + error >= floor.value) {
            kept.push(r);
            keptUpper.push(approx + error);
            keptApprox.push(approx);
          }
        }
      };
      scan(rows, size);
      // leaves best bound first: a max-heap of leaf numbers, built in linear time
      for (let l = 0; l < leaves; l++) heap[l] = l;
      for (let i = (leaves >> 1) - 1; i >= 0; i--) siftDown(heap, leaves, i, bound);
      for (let left = leaves; left > 0; ) {
        const l = heap[0]!;
        if (bound[l]! < floor.value) break;
        heap[0] = heap[--left]!;
        siftDown(heap, left, 0, bound);
        scan(starts[l]!, starts[l + 1]!);
      }
      const out = { rows: [] as number[], upper: [] as number[], scanned };
      let last = floor.value;
      if (refined) {
        // each kept row's interval narrowed where it has a finer code (both intervals hold its score): the k-th
        // largest lower bound among them is a floor again (the k rows that made the floor are all kept, and their
        // lower bounds only rose), and a row whose upper bound is below it is outscored by k others
        const refinedFloor = createFloor(k);
        for (let i = 0; i < kept.length; i++) {
          if (keptUpper[i]! < last) continue;
          const r = kept[i]!;
          const approx = keptApprox[i]!;
          let lower = approx - (residual[r]! * qLength + norm[r]! * qResidual + SLACK);
          const finer = refined.bounds(r, approx, unit, qLength, qResidual);
          if (finer) {
            lower = Math.max(lower, finer[0]);
            keptUpper[i] = Math.min(keptUpper[i]!, finer[1]);
          }
          refinedFloor.offer(lower);
        }
        last = Math.max(last, refinedFloor.value);
      }
      for (let i = 0; i < kept.length; i++) {
        if (keptUpper[i]! < last) continue;
        out.rows.push(kept[i]!);
        out.upper.push(keptUpper[i]!);
      }
      return out;
    },
  };
}

function siftDown(heap: Int32Array, size: number, at: number, key: Float64Array) {
  const item = heap[at]!;
  let i = at;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= size) break;
    const right = left + 1;
    const child = right < size && key[heap[right]!]! > key[heap[left]!]! ? right : left;
    if (key[heap[child]!]! <= key[item]!) break;
    heap[i] = heap[child]!;
    i = child;
  }
  heap[i] = item;
}
