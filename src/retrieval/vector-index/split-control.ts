// The control word a split pass and each of its workers share (split.ts writes it, split-worker.mjs answers on it):
// its states, its layout and the kernel's functions by number. One definition, loaded by both sides.

/** The word's first int: where the worker is. */
export const IDLE = 1;
export const MAIL = 2;
export const JOB = 3;
export const DONE = 4;
export const FAILED = 5;
export const ABANDONED = 6;

/** The rest of the word: state, memory id, function, five arguments, blocks taken; the selection's; the blocks'. */
export const AT = {
  id: 1,
  fn: 2,
  args: 3,
  result: 8,
  select: 9,
  count: 10,
  k: 11,
  shift: 12,
  kept: 13,
  generation: 14,
  blockGroups: 15,
  blocks: 16,
  stall: 17,
  bounds: 18,
  sums: 19,
} as const;
/** Even, so that the query's bounds (three f64) after the ints are aligned. */
export const CONTROL_INTS = 20;

/** The kernel's functions a worker runs, by their number in the word. */
export const FUNCTIONS = ['dots', 'dots7', 'read'] as const;
