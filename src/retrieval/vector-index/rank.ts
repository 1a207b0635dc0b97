// Why the answer is exact. For a row x and the query q (both as stored), with integer approximations x̂ and q̂:
//   x·q − x̂·q̂ = (x − x̂)·q + x̂·(q − q̂),  so  |x·q − x̂·q̂| ≤ ‖x − x̂‖·‖q‖ + ‖x̂‖·‖q − q̂‖ = e   (Cauchy–Schwarz)
// and every row's exact score lies in [a − e, a + e], a = x̂·q̂ from the integer kernel. Let L be the k-th largest
// lower bound: at least k rows score ≥ L, so a row whose upper bound is below L scores strictly less than k others
// and cannot be in the top k, whatever the tie-break. Scoring the remaining rows exactly gives the exact top k.
// SLACK widens each interval for float64 rounding: all values are at most about 1 (unit vectors) and each is a
// sum of at most a few thousand rounded terms, so the rounding is below 1e-12; stored bounds are rounded up.
//
// The rows may be split into ranges, each passed on its own (kernel.wat's "select", possibly on another thread):
// a range keeps its k largest lower bounds and every row whose upper bound reached its own floor as it stood,
// which is never above the range's k-th largest lower bound, itself never above L (L is the k-th largest of more
// rows). So every row with an upper bound ≥ L is among some range's kept rows, and L is the k-th largest of the
// ranges' kept lower bounds taken together (they hold the k largest of all): the kept rows filtered by L, in
// range order, are exactly the rows one pass over everything keeps, however the rows were split.
export const SLACK = 1e-9;

/** The query's integer approximation: q̂ = scale·q_int, ‖q − q̂‖, and ‖q‖. */
export type QueryBounds = { scale: number; residual: number; length: number };

/** What one range's pass left: its largest lower bounds (up to k), and its kept rows with their upper bounds. */
export type RangePass = { lowers: ArrayLike<number>; rows: ArrayLike<number>; upper: ArrayLike<number>; first: number };

/**
 * Rows whose exact score may be among the best `k` (k ≤ the rows passed), in row order, with the upper bound of
 * each one's score; `passes` in row order.
 */
export function candidates(passes: readonly RangePass[], k: number): { rows: number[]; upper: number[] } {
  let count = 0;
  for (const pass of passes) count += pass.lowers.length;
  const lowers = new Float64Array(count);
  let at = 0;
  for (const pass of passes) {
    lowers.set(pass.lowers, at);
    at += pass.lowers.length;
  }
  lowers.sort();
  const floor = lowers[count - k]!; // L: the k-th largest lower bound of all rows
  const out: { rows: number[]; upper: number[] } = { rows: [], upper: [] };
  for (const pass of passes) {
    for (let i = 0; i < pass.rows.length; i++) {
      const upper = pass.upper[i]!;
      if (upper < floor) continue;
      out.rows.push(pass.first + pass.rows[i]!);
      out.upper.push(upper);
    }
  }
  return out;
}

/** The best `k` rows by exact score, highest first, equal scores in row (insertion) order. */
export function bestExact(rows: readonly number[], exact: (row: number) => number, k: number): { row: number; score: number }[] {
  const scored = rows.map((row) => ({ row, score: exact(row) }));
  scored.sort((a, b) => b.score - a.score || a.row - b.row);
  return scored.slice(0, k);
}
