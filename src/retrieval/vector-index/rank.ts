// Why the answer is exact. For a row x and the query q (both as stored), with integer approximations x̂ and q̂:
//   x·q − x̂·q̂ = (x − x̂)·q + x̂·(q − q̂),  so  |x·q − x̂·q̂| ≤ ‖x − x̂‖·‖q‖ + ‖x̂‖·‖q − q̂‖ = e   (Cauchy–Schwarz)
// and every row's exact score lies in [a − e, a + e], a = x̂·q̂ from the integer kernel. Let L be the k-th largest
// lower bound: at least k rows score ≥ L, so a row whose upper bound is below L scores strictly less than k others
// and cannot be in the top k, whatever the tie-break. Scoring the remaining rows exactly gives the exact top k.
// SLACK widens each interval for float64 rounding: all values are at most about 1 (unit vectors) and each is a
// sum of at most a few thousand rounded terms, so the rounding is below 1e-12; stored bounds are rounded up.
// Where the engine has relaxed SIMD the argument is applied twice: first with a coarse query (63 steps a side, so e
// is about three times wider) over every row, then with the fine one (rows.ts) over the rows the first kept. Each
// pass drops only rows that at least k others (all still kept) provably outscore, so together they keep every row
// the top k can hold, and the exact scores decide as before.
export const SLACK = 1e-9;

/** The query's integer approximation: q̂ = scale·q_int, ‖q − q̂‖, and ‖q‖. */
export type QueryBounds = { scale: number; residual: number; length: number };

export type RowBounds = {
  readonly scale: Float32Array;
  readonly residual: Float32Array;
  readonly norm: Float32Array;
  /**
   * At least the largest scale, ‖x − x̂‖ and ‖x̂‖ of every row (LIMIT_SCALE, LIMIT_RESIDUAL, LIMIT_NORM): where given,
   * a range's rows are first tested on their integer dot product alone (see rowsBelow).
   */
  readonly limits?: Float32Array;
};

/** A RowBounds `limits`' entries. */
export const LIMIT_SCALE = 0;
export const LIMIT_RESIDUAL = 1;
export const LIMIT_NORM = 2;

/**
 * Rows whose exact score may be among the best `k` of `count` (k ≤ count), in the order given, with the upper bound
 * of each one's score. Row i is `ids[i]` when given (a subset), else `from` + i (a range; from 0 by default); its
 * integer dot product is dots[i], less `shift` times the row's `sums` entry when given (the relaxed pass's offset
 * query, see kernel-relaxed.wat).
 * A range's rows kept with k of its own are a superset of what the whole would keep: its k-th lower bound is at most
 * the whole's, and the whole's k best lower bounds are kept in their ranges. So the union of the ranges' answers,
 * taken again as `ids`, gives the whole's answer, row for row and bound for bound (a split pass, split.ts).
 * `floor`: a floor already proven on other rows (the k-th largest of k rows' lower bounds, as answered by an earlier
 * call over other rows: each block a thread takes starts from the floor of those it took before). A row below it is
 * outscored by k others just the same, so the rows kept are still a superset of the whole's; the floor reached is
 * answered.
 */
export function candidates(
  dots: Int32Array,
  bounds: RowBounds,
  query: QueryBounds,
  count: number,
  k: number,
  of: { ids?: ArrayLike<number>; from?: number; sums?: Int32Array; shift?: number; floor?: number } = {},
): { rows: number[]; upper: number[]; lower: number[]; floor: number } {
  const { scale, residual, norm } = bounds;
  const qScale = query.scale;
  const qResidual = query.residual;
  const qLength = query.length;
  const { ids, sums } = of;
  const shift = of.shift ?? 0;
  const from = of.from ?? 0;
  // One pass: a min-heap keeps the k largest lower bounds so far, so its root (the floor) only rises, and a row is
  // kept while its upper bound reaches the floor as it stands; the final floor then drops the rows kept too early.
  const heap = new Float64Array(k);
  const carried = of.floor ?? -Infinity;
  let floor = carried;
  const kept: number[] = [];
  const keptUpper: number[] = [];
  const keptLower: number[] = [];
  // the relaxed pass over a range (most of a full scan's time): its own loop, the rows below the floor passed over with
  // nothing else looked at; the same arithmetic, and the same floor at every row, as the general loop below
  let start = 0;
  if (!ids && sums) {
    for (; start < count && start < k; start++) {
      const r = from + start;
      const approx = (dots[start]! - shift * sums[r]!) * scale[r]! * qScale;
      const error = residual[r]! * qLength + norm[r]! * qResidual + SLACK;
      siftUp(heap, start, approx - error);
      if (start === k - 1) floor = Math.max(carried, heap[0]!);
      kept.push(r);
      keptUpper.push(approx + error);
      keptLower.push(approx - error);
    }
    // with the rows' limits, a row whose integer dot product is at most `below` is below the floor (rowsBelow), and
    // is passed over on two loads (most rows, once k are in); the others are looked at as before
    const limits = bounds.limits;
    const below = limits ? rowsBelow(limits, query) : () => Number.NEGATIVE_INFINITY;
    let under = below(floor);
    for (let i = start; i < count; i++) {
      const r = from + i;
      const d = dots[i]! - shift * sums[r]!;
      if (d <= under) continue;
      const approx = d * scale[r]! * qScale;
      const error = residual[r]! * qLength + norm[r]! * qResidual + SLACK;
      if (approx + error < floor) continue;
      const lower = approx - error;
      if (lower > floor) {
        siftDown(heap, k, lower);
        floor = Math.max(carried, heap[0]!);
        under = below(floor);
      }
      if (approx + error >= floor) {
        kept.push(r);
        keptUpper.push(approx + error);
        keptLower.push(lower);
      }
    }
    start = count;
  }
  let filled = 0;
  for (let i = start; i < count; i++) {
    const r = ids ? ids[i]! : from + i;
    const approx = (sums ? dots[i]! - shift * sums[r]! : dots[i]!) * scale[r]! * qScale;
    const error = residual[r]! * qLength + norm[r]! * qResidual + SLACK;
    // below the floor: its lower bound is too, so it neither raises the floor nor is kept (most rows, once k are in)
    if (approx + error < floor) continue;
    const lower = approx - error;
    if (filled < k) {
      // the first k rows not below a carried floor (with none carried, the first k rows)
      siftUp(heap, filled++, lower);
      if (filled === k) floor = Math.max(carried, heap[0]!);
    } else if (lower > floor) {
      siftDown(heap, k, lower);
      floor = Math.max(carried, heap[0]!);
    }
    if (approx + error >= floor) {
      kept.push(r);
      keptUpper.push(approx + error);
      keptLower.push(lower);
    }
  }
  const out: { rows: number[]; upper: number[]; lower: number[]; floor: number } = { rows: [], upper: [], lower: [], floor };
  for (let i = 0; i < kept.length; i++) {
    if (keptUpper[i]! < floor) continue;
    out.rows.push(kept[i]!);
    out.upper.push(keptUpper[i]!);
    out.lower.push(keptLower[i]!);
  }
  return out;
}

/**
 * candidates() over rows whose bounds it computed already (a split pass's blocks answer each row kept with them): the
 * same selection, row for row, so the same rows, bounds and floor, without reading any row's dot product or bounds
 * again (the union of a million rows' blocks is thousands of rows scattered over megabytes of bounds).
 */
export function candidatesOf(
  rows: ArrayLike<number>,
  upper: ArrayLike<number>,
  lower: ArrayLike<number>,
  count: number,
  k: number,
): { rows: number[]; upper: number[]; floor: number } {
  const floor = createFloor(k);
  const kept: number[] = [];
  for (let i = 0; i < count; i++) {
    const up = upper[i]!;
    if (up < floor.value) continue;
    floor.offer(lower[i]!);
    if (up >= floor.value) kept.push(i);
  }
  const out: { rows: number[]; upper: number[]; floor: number } = { rows: [], upper: [], floor: floor.value };
  for (const i of kept) {
    if (upper[i]! < out.floor) continue;
    out.rows.push(rows[i]!);
    out.upper.push(upper[i]!);
  }
  return out;
}

/**
 * For rows whose scale, ‖x − x̂‖ and ‖x̂‖ are at most `limits`: the function giving, for a floor, an integer D such
 * that every such row whose integer dot product d (less the relaxed shift) is at most D has an upper bound, as
 * candidates() computes it, below that floor (-Infinity where no D can be proven). Proof, in float64 as computed:
 * rounding is monotone, so with s ≤ S, e ≤ E (E the error with the limits, computed in the same order), d ≥ 0:
 * fl(fl(d·s)·q) ≤ fl(fl(d·S)·q) = A(d), nondecreasing in d; with d < 0 the approximation is ≤ 0 = A(0); so the upper
 * bound fl(approx + error) ≤ fl(A(max(d, 0)) + E) = U(max(d, 0)), and U(D) < floor is checked for the D answered.
 */
export function rowsBelow(limits: Float32Array, query: QueryBounds): (floor: number) => number {
  const maxScale = limits[LIMIT_SCALE]!;
  const qScale = query.scale;
  const most = limits[LIMIT_RESIDUAL]! * query.length + limits[LIMIT_NORM]! * query.residual + SLACK;
  if (!Number.isFinite(maxScale * qScale) || !Number.isFinite(most)) return () => Number.NEGATIVE_INFINITY;
  const upper = (d: number) => d * maxScale * qScale + most;
  const step = maxScale * qScale;
  return (floor) => {
    if (!(most < floor)) return Number.NEGATIVE_INFINITY; // U(0) = E: not even d ≤ 0 is proven below
    let d = step > 0 ? Math.min(2 ** 31, Math.floor((floor - most) / step)) : 2 ** 31;
    for (let n = 0; n < 4 && d > 0 && !(upper(d) < floor); n++) d -= 1; // the quotient's own rounding
    return d > 0 && upper(d) < floor ? d : 0;
  };
}

/** Row `r`'s error bound e for the query (see the top of this file), exactly as candidates() computes it. */
export function rowError(bounds: RowBounds, query: QueryBounds, r: number): number {
  return bounds.residual[r]! * query.length + bounds.norm[r]! * query.residual + SLACK;
}

/**
 * The k-th largest of the lower bounds offered so far (-Infinity before k of them): a row whose upper bound is below
 * it scores strictly less than k others (the argument above), so the floor only rises.
 */
export function createFloor(k: number) {
  const heap = new Float64Array(k);
  let count = 0;
  let floor = -Infinity;
  return {
    get value() {
      return floor;
    },
    offer(lower: number) {
      if (count < k) {
        siftUp(heap, count++, lower);
        if (count === k) floor = heap[0]!;
      } else if (lower > floor) {
        siftDown(heap, k, lower);
        floor = heap[0]!;
      }
    },
  };
}

/** The best `k` rows by exact score, highest first, equal scores in row (insertion) order. */
export function bestExact(rows: readonly number[], exact: (row: number) => number, k: number): { row: number; score: number }[] {
  const scored = rows.map((row) => ({ row, score: exact(row) }));
  scored.sort((a, b) => b.score - a.score || a.row - b.row);
  return scored.slice(0, k);
}

function siftUp(heap: Float64Array, at: number, value: number) {
  let i = at;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent]! <= value) break;
    heap[i] = heap[parent]!;
    i = parent;
  }
  heap[i] = value;
}

/** Replaces the smallest (the root) with `value` and restores the heap. */
function siftDown(heap: Float64Array, size: number, value: number) {
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= size) break;
    const right = left + 1;
    const child = right < size && heap[right]! < heap[left]! ? right : left;
    if (heap[child]! >= value) break;
    heap[i] = heap[child]!;
    i = child;
  }
  heap[i] = value;
}
