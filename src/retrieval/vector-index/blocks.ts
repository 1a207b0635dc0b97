import { candidates, type QueryBounds, type RowBounds } from './rank.ts';

// A split pass's work in blocks (split.ts): every thread of the pass, the caller's included, takes the next block from
// one shared counter until none is left, so a thread the scheduler serves late takes fewer blocks instead of holding
// up a fixed half. Each block's rows are selected where they were scanned, with k of their own (rank.ts: the union is
// a superset of what the whole would keep); the caller then reads each block's rows kept, in block order.
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
 * What a pass's threads each select over their blocks: rank.ts candidates' arguments, where kept rows go, and where
 * their bounds go (`bounds`: two f64 a row, upper then lower, at the block's own rows as the kept rows are).
 */
export type BlockSelection = { query: QueryBounds; count: number; k: number; shift: number; kept: number; bounds: number };

/** One pass: the kernel function and its arguments over every row (as kernel.ts has them), cut into blocks. */
export type BlockPass = {
  readonly fn: (...args: number[]) => number | undefined;
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

/**
 * Passes block `b` and selects its rows where asked, from `floor` (rank.ts: proven on the blocks this thread took
 * before); marks it finished in this pass's generation. Answers the floor reached.
 */
export function passBlock(
  pass: BlockPass,
  b: number,
  memory: WebAssembly.Memory,
  bounds: RowBounds & { sums: Int32Array },
  work: Int32Array,
  floor = Number.NEGATIVE_INFINITY,
): number {
  const from = b * pass.blockGroups;
  const to = Math.min(pass.groups, from + pass.blockGroups);
  const at = pass.rows + from * 4 * pass.stride;
  const blocks = blocksOf(work);
  let result: number;
  let reached = floor;
  if (pass.read) result = pass.fn(at, to - from, pass.stride) ?? 0;
  else {
    pass.fn(pass.query, at, to - from, pass.stride, pass.out + from * 16);
    result = 0;
  }
  const select = pass.select;
  if (select) {
    const first = 4 * from;
    const count = Math.max(0, Math.min(select.count, 4 * to) - first);
    const dots = new Int32Array(memory.buffer, pass.out + first * 4, count);
    const sums = select.shift ? { sums: bounds.sums, shift: select.shift } : {};
    const kept = candidates(dots, bounds, select.query, count, select.k, { from: first, floor, ...sums });
    new Int32Array(memory.buffer, select.kept + 4 * first, kept.rows.length).set(kept.rows);
    const keptBounds = new Float64Array(memory.buffer, select.bounds + 16 * first, 2 * kept.rows.length);
    for (let i = 0; i < kept.rows.length; i++) {
      keptBounds[2 * i] = kept.upper[i]!;
      keptBounds[2 * i + 1] = kept.lower[i]!;
    }
    result = kept.rows.length;
    reached = kept.floor;
  }
  work[1 + blocks + b] = result;
  Atomics.store(work, 1 + b, pass.generation);
  return reached;
}

/** Takes blocks until none is left or `still()` says the pass is no longer this thread's; the blocks taken. */
export function passBlocks(
  pass: BlockPass,
  memory: WebAssembly.Memory,
  bounds: RowBounds & { sums: Int32Array },
  work: Int32Array,
  still: () => boolean = () => true,
  claimed?: () => void,
): number {
  let taken = 0;
  let floor = Number.NEGATIVE_INFINITY; // carried from block to block: the floor only rises
  while (still()) {
    const b = claim(work, pass);
    if (b < 0) break;
    claimed?.();
    floor = passBlock(pass, b, memory, bounds, work, floor);
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
