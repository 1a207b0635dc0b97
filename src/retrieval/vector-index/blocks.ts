import { createFloor, rowError, rowsBelow, type QueryBounds, type RowBounds } from './rank.ts';

// A split pass's work in blocks (split.ts): every thread of the pass, the caller's included, takes the next block from
// one shared counter until none is left, so a thread the scheduler serves late takes fewer blocks instead of holding
// up a fixed half. Each block's rows are selected where they were scanned, on the floor its thread has reached over
// the blocks it took (rank.ts: the union is a superset of what the whole would keep); the caller then reads each
// block's rows kept, in block order. The kernel's `above` tests the rows four at a time against the integer dot
// product proven below that floor (rank.ts rowsBelow), so this JavaScript looks only at the few it lists: looked at
// one by one here, the test was 8 to 9 ns a row, 7 % of the pass's CPU time (measured on 11-30).
// The same code runs on the caller's thread and in each worker (split-worker.mjs loads this file).
//
// The work words, one Int32Array on a SharedArrayBuffer per pass: [0] the counter, the pass's generation in the high
// half and the next block in the low half (a claim is a compare-and-swap, so a worker still on an earlier pass can
// never take a block of this one); then per block the generation it was finished in; then per block its result (the
// rows kept, or what the kernel answered).

/** Rows a block: 16 of them at a million rows; its pass about 1.5 ms of one core, its counter's claim a few ns. */
export const BLOCK_ROWS = 16_384;
const BLOCK_GROUPS = BLOCK_ROWS / 4;
/** Blocks a counter can count (its low half), and generations before they wrap. */
const MAX_BLOCKS = 0xffff;
const GENERATIONS = 0x7fff;

/** The work words for passes over up to `rows` rows. */
export function workFor(rows: number): Int32Array<SharedArrayBuffer> {
  const blocks = Math.min(MAX_BLOCKS, Math.ceil(rows / BLOCK_ROWS));
  return new Int32Array(new SharedArrayBuffer(4 * (1 + 2 * blocks)));
}

/** Whether `work` has room for the blocks of `rows` rows. */
export function roomFor(work: Int32Array, rows: number): boolean {
  return blocksOf(work) >= Math.min(MAX_BLOCKS, Math.ceil(rows / BLOCK_ROWS));
}

/** Blocks of the work words (what workFor was given room for). */
export function blocksOf(work: Int32Array): number {
  return (work.length - 1) / 2;
}

/** Groups of four rows a block of `groups` groups is cut into (so that no more blocks are made than there is room for). */
export function blockGroups(groups: number, work: Int32Array): number {
  return Math.max(BLOCK_GROUPS, Math.ceil(groups / blocksOf(work)));
}

/**
 * What a pass's threads each select over their blocks: rank.ts candidates' arguments (`sums`: where the rows' sums
 * are in the memory, one i32 a row, for the relaxed pass's `shift`), where kept rows go, and where their bounds go
 * (`bounds`: two f64 a row, upper then lower, at the block's own rows as the kept rows are).
 */
export type BlockSelection = {
  query: QueryBounds;
  count: number;
  k: number;
  shift: number;
  sums: number;
  kept: number;
  bounds: number;
};

/** One pass: the kernel function and its arguments over every row (as kernel.ts has them), cut into blocks. */
export type BlockPass = {
  readonly fn: (...args: number[]) => number | undefined;
  /** The kernel's `above` on the same memory (kernel.ts): the selection's first test, four rows a step. */
  readonly above: (out: number, sums: number, shift: number, count: number, under: number, list: number) => number;
  readonly read: boolean;
  readonly query: number;
  readonly rows: number;
  readonly groups: number;
  readonly stride: number;
  readonly out: number;
  readonly blockGroups: number;
  readonly blocks: number;
  readonly generation: number;
  readonly select?: BlockSelection;
};

let lastGeneration = 0;

/** Opens a pass on the work words: no block finished, the counter at block 0 of a new generation; that generation. */
export function openPass(work: Int32Array, blocks: number): number {
  lastGeneration = (lastGeneration % GENERATIONS) + 1;
  work.fill(0, 1, 1 + blocks);
  Atomics.store(work, 0, lastGeneration << 16);
  return lastGeneration;
}

/** The next block of the pass, or -1 when none is left (or the counter has moved on to another pass). */
function claim(work: Int32Array, pass: BlockPass): number {
  for (;;) {
    const now = Atomics.load(work, 0);
    const next = now & 0xffff;
    if (now >>> 16 !== pass.generation || next >= pass.blocks) return -1;
    if (Atomics.compareExchange(work, 0, now, now + 1) === now) return next;
  }
}

/** Rows of a block whose dot products `above` tests at once, before the floor it tests them on is raised again. */
const ABOVE_ROWS = 1024;
const I32_MIN = -(2 ** 31);
const I32_MAX = 2 ** 31 - 1;

/**
 * One thread's selection over the blocks it takes in a pass (rank.ts candidates, with the same arithmetic): one floor,
 * the k-th largest lower bound of the rows it looked at, raised from block to block, so that a row whose upper bound is
 * below it is outscored by k others and dropped. The rows a block keeps are a superset of what the whole would keep
 * there: a thread's floor is at most the whole's.
 */
export type ThreadSelection = ReturnType<typeof threadSelection>;

export function threadSelection(bounds: RowBounds, select: BlockSelection) {
  const floor = createFloor(select.k);
  const below = bounds.limits ? rowsBelow(bounds.limits, select.query) : () => Number.NEGATIVE_INFINITY;
  /** The integer dot product at or under which a row is proven below the floor (rank.ts rowsBelow), as an i32. */
  let under = I32_MIN;
  const raise = () => {
    const d = below(floor.value);
    under = d === Number.NEGATIVE_INFINITY ? I32_MIN : Math.min(I32_MAX, d);
  };
  return {
    floor,
    get under() {
      return under;
    },
    raise,
  };
}

/**
 * Passes block `b` and selects its rows where asked, on `selection` (this thread's, carried over the blocks it
 * takes); marks it finished in this pass's generation.
 */
export function passBlock(
  pass: BlockPass,
  b: number,
  memory: WebAssembly.Memory,
  bounds: RowBounds,
  work: Int32Array,
  selection?: ThreadSelection,
): void {
  const from = b * pass.blockGroups;
  const to = Math.min(pass.groups, from + pass.blockGroups);
  const at = pass.rows + from * 4 * pass.stride;
  const blocks = blocksOf(work);
  let result: number;
  if (pass.read) result = pass.fn(at, to - from, pass.stride) ?? 0;
  else {
    pass.fn(pass.query, at, to - from, pass.stride, pass.out + from * 16);
    result = 0;
  }
  const select = pass.select;
  if (select) result = selectBlock(pass, select, 4 * from, 4 * to, memory, bounds, selection ?? threadSelection(bounds, select));
  work[1 + blocks + b] = result;
  Atomics.store(work, 1 + b, pass.generation);
}

/**
 * The rows first..end-1 of a block just passed that may hold the top k (rank.ts candidates' test, on `selection`'s
 * floor), written with their bounds at the block's own rows of the kept areas; answers how many.
 */
function selectBlock(
  pass: BlockPass,
  select: BlockSelection,
  first: number,
  end: number,
  memory: WebAssembly.Memory,
  bounds: RowBounds,
  selection: ThreadSelection,
): number {
  const count = Math.max(0, Math.min(select.count, end) - first);
  const { scale } = bounds;
  const { shift, query } = select;
  const qScale = query.scale;
  const buffer = memory.buffer;
  const dots = new Int32Array(buffer, pass.out + first * 4, count);
  const sums = new Int32Array(buffer, select.sums + first * 4, count);
  // the block's own room for its kept rows holds each piece's rows to look at first (a piece is at most a block)
  const listAt = select.kept + 4 * first;
  const list = new Int32Array(buffer, listAt, Math.min(ABOVE_ROWS, Math.ceil(count / 4) * 4)); // `above` tests whole fours
  const floor = selection.floor;
  const rows: number[] = [];
  const upper: number[] = [];
  const lower: number[] = [];
  for (let piece = 0; piece < count; piece += ABOVE_ROWS) {
    const size = Math.min(ABOVE_ROWS, count - piece);
    const found = pass.above(pass.out + 4 * (first + piece), select.sums + 4 * (first + piece), shift, size, selection.under, listAt);
    for (let j = 0; j < found; j++) {
      const i = piece + list[j]!;
      if (i >= count) break; // past the rows asked (the last group's others)
      const r = first + i;
      const approx = (dots[i]! - shift * sums[i]!) * scale[r]! * qScale;
      const error = rowError(bounds, query, r);
      if (approx + error < floor.value) continue;
      const low = approx - error;
      const before = floor.value;
      floor.offer(low);
      if (floor.value !== before) selection.raise();
      if (approx + error >= floor.value) {
        rows.push(r);
        upper.push(approx + error);
        lower.push(low);
      }
    }
  }
  const keptRows = new Int32Array(buffer, listAt, count);
  const keptBounds = new Float64Array(buffer, select.bounds + 16 * first, 2 * count);
  let kept = 0;
  for (let i = 0; i < rows.length; i++) {
    if (upper[i]! < floor.value) continue; // kept before the floor rose past it
    keptRows[kept] = rows[i]!;
    keptBounds[2 * kept] = upper[i]!;
    keptBounds[2 * kept + 1] = lower[i]!;
    kept += 1;
  }
  return kept;
}

/** Takes blocks until none is left or `still()` says the pass is no longer this thread's; the blocks taken. */
export function passBlocks(
  pass: BlockPass,
  memory: WebAssembly.Memory,
  bounds: RowBounds,
  work: Int32Array,
  still: () => boolean = () => true,
  claimed?: () => void,
): number {
  let taken = 0;
  // one selection over the thread's blocks: its floor only rises
  const selection = pass.select ? threadSelection(bounds, pass.select) : undefined;
  while (still()) {
    const b = claim(work, pass);
    if (b < 0) break;
    claimed?.();
    passBlock(pass, b, memory, bounds, work, selection);
    taken += 1;
  }
  return taken;
}

/** Whether block `b` was finished in this pass. */
export function finished(work: Int32Array, pass: BlockPass, b: number): boolean {
  return Atomics.load(work, 1 + b) === pass.generation;
}

/** Block `b`'s result: the rows it kept (a selection), or what the kernel answered. */
export function resultOf(work: Int32Array, b: number): number {
  return work[1 + blocksOf(work) + b]!;
}
