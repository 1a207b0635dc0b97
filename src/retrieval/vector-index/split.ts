import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { WORKER_RESOURCE_LIMITS } from '../../platform/worker-heap.ts';
import type { Kernel, KernelModules } from './kernel.ts';
import {
  type BlockPass,
  type BlockSelection,
  blockGroups,
  finished,
  openPass,
  passBlock,
  passBlocks,
  resultOf,
  roomFor,
  threadSelection,
  workFor,
} from './blocks.ts';
import { collectReleased, exposeCollection } from './split-release.ts';
import { ABANDONED, AT, CONTROL_INTS, DONE, FUNCTIONS, IDLE, JOB, MAIL } from './split-control.ts';

// A large copy's full pass split across the cores: the pass only reads memory, and one core cannot read as fast as
// two. The rows stay in ONE shared WebAssembly memory; per process, one worker per extra core instantiates the kernel
// on each memory it is handed. A pass is cut into blocks (blocks.ts) that this thread and the woken workers take from
// one shared counter, so a thread the scheduler serves late takes fewer of them instead of holding up a fixed half;
// this thread waits only for a worker still on a block. The handshake is a control word per worker
// (Atomics.wait/notify: microseconds, where a message costs a tenth of a millisecond and more); messages only hand a
// worker a memory, or tell it to let go of one. A dead, failed or late worker leaves the block it held to the caller,
// so the answer never depends on one.
//
// A copy released or replaced has its workers drop their instance on its memory and collect, and this thread collects
// until the memory is gone (split-release.ts: V8 never collects a shared memory unasked).

export type PassFunction = (typeof FUNCTIONS)[number];

/** How long the caller waits for a worker still on a block before passing the block itself and giving that worker up. */
const WAIT_MS = 5_000;
/** Workers started in a process beyond the first ones: one that keeps failing is replaced only so often. */
const REPLACEMENTS = 3;

/** Threads a pass may use, the caller's included: one per available core (1: every pass on the caller's thread). */
export function splitThreads(): number {
  try {
    return Math.max(1, availableParallelism());
  } catch {
    return 1;
  }
}

/** A store's per-row bounds (rank.ts) on shared buffers, so that a worker selects its blocks' rows as this thread does. */
export type SharedBounds = {
  readonly scale: Float32Array<SharedArrayBuffer>;
  readonly residual: Float32Array<SharedArrayBuffer>;
  readonly norm: Float32Array<SharedArrayBuffer>;
  /** rank.ts RowBounds' limits: the largest bounds of any row, which a thread's selection tests a row's dot product on first. */
  readonly limits: Float32Array<SharedArrayBuffer>;
};

/**
 * What a pass then selects (rank.ts candidates), each thread over each of its blocks: the query's bounds, k, the relaxed pass's
 * shift (0: none) and where the rows' sums are, the rows passed, and where each block's kept rows go (one i32 a row, at
 * the block's own rows).
 */
export type Selection = BlockSelection;

/** A store's bounds as the workers have them: the arrays, their work words (blocks.ts), and how often made anew. */
type Bounds = { version: number; arrays: SharedBounds; work: Int32Array<SharedArrayBuffer> };

type Helper = {
  readonly alive: boolean;
  ready(): boolean;
  /** Wakes the worker to take blocks of `pass`; undefined if it cannot now. */
  start(id: number, memory: WebAssembly.Memory, bounds: Bounds, fn: PassFunction, pass: BlockPass): Pending | undefined;
  forget(id: number): void;
  stop(): void;
};
/**
 * A worker woken for a pass. finish() waits for it: the blocks it took, or undefined (failed or late: given up, and
 * its unfinished block passed by the caller). settle() does not wait: once every block is finished, a worker not yet
 * back (one the scheduler has not served) holds none, and its pass is taken back.
 */
type Pending = { finish(): number | undefined; settle(): number | undefined };

let pool: { modules: KernelModules; helpers: Helper[]; started: number } | undefined;
let nextId = 1;
/** Blocks taken by workers, every pass of the process (tests). */
let workerBlocks = 0;
/** Tests: how long each worker sleeps holding its first block of a pass, and how long the caller waits for one. */
let stallMs = 0;
let waitMs = WAIT_MS;

/** The pass of one shared memory: its blocks taken by the pool's workers and this thread. */
export type SplitPass = {
  /** Runs kernel function `fn` over `groups` groups of four rows (args as kernel.ts has them), split; its result. */
  run(fn: PassFunction, query: number, rows: number, groups: number, stride: number, out: number): number;
  /**
   * Runs `fn` over the rows, split, and each thread selects each block's rows (rank.ts candidates, k of its own): the
   * union, in row order, with each row's bounds, which rank.ts candidatesOf narrows to exactly what the whole would keep.
   */
  select(
    fn: PassFunction,
    query: number,
    rows: number,
    stride: number,
    out: number,
    selection: Selection,
  ): { rows: number[]; upper: number[]; lower: number[] };
  /** The store's bounds, again whenever they are made anew (the store grew). */
  setBounds(bounds: SharedBounds): void;
  /** Workers hold this memory no more; later passes run on this thread, and the memory is freed once dropped here. */
  release(): void;
  /** Passes in which a worker took at least one block (a worker the scheduler serves late may take none). */
  readonly workerRanges: number;
};

/** A pass over `kernel`'s shared memory, split across `threads` threads (this one included) from `minGroups` groups. */
export function splitPass(modules: KernelModules, kernel: Kernel, threads: number, minGroups: number): SplitPass {
  const id = nextId++;
  const memory = kernel.memory;
  /** The store's bounds (setBounds, before any selection). */
  const bounds: Bounds = { version: 0, arrays: undefined as unknown as SharedBounds, work: workFor(0) };
  let released = false;
  let workerRanges = 0;
  /** Every block of `fn` over `groups` groups passed, by whichever thread takes it; the pass, for its blocks' results. */
  const passAll = (fn: PassFunction, query: number, rows: number, groups: number, stride: number, out: number, select?: Selection) => {
    const f = kernel[fn] as ((...a: number[]) => number | undefined) | undefined;
    if (!f) throw new Error(`the kernel has no ${fn}`);
    const helpers = released || groups < minGroups ? [] : readyHelpers(modules, threads);
    if (!roomFor(bounds.work, 4 * groups)) {
      bounds.work = workFor(4 * groups); // a pass before any bounds were set (none selects then)
      bounds.version += 1;
    }
    const work = bounds.work;
    const size = blockGroups(groups, work);
    const blocks = Math.ceil(groups / size);
    const generation = openPass(work, blocks);
    const pass: BlockPass = {
      fn: f,
      above: kernel.above,
      read: fn === 'read',
      query,
      rows,
      groups,
      stride,
      out,
      blockGroups: size,
      blocks,
      generation,
      select,
    };
    const pending = helpers.flatMap((helper) => helper.start(id, memory, bounds, fn, pass) ?? []);
    let own = passBlocks(pass, memory, bounds.arrays, work);
    let all = true;
    for (let b = 0; b < blocks && all; b++) all = finished(work, pass, b);
    for (const p of pending) {
      const taken = all ? p.settle() : p.finish();
      if (taken) workerBlocks += taken;
    }
    // blocks a failed or late worker took and did not finish: passed here
    const late = select ? threadSelection(bounds.arrays, select) : undefined;
    for (let b = 0; b < blocks; b++) {
      if (finished(work, pass, b)) continue;
      passBlock(pass, b, memory, bounds.arrays, work, late);
      own += 1;
    }
    if (own < blocks) workerRanges += 1;
    return pass;
  };
  return {
    get workerRanges() {
      return workerRanges;
    },
    run(fn, query, rows, groups, stride, out) {
      const pass = passAll(fn, query, rows, groups, stride, out);
      let result = 0;
      for (let b = 0; b < pass.blocks; b++) result |= resultOf(bounds.work, b);
      return result;
    },
    select(fn, query, rows, stride, out, selection) {
      const pass = passAll(fn, query, rows, Math.ceil(selection.count / 4), stride, out, selection);
      const union = { rows: [] as number[], upper: [] as number[], lower: [] as number[] };
      for (let b = 0; b < pass.blocks; b++) {
        const from = 4 * b * pass.blockGroups;
        const kept = resultOf(bounds.work, b);
        for (const row of new Int32Array(memory.buffer, selection.kept + 4 * from, kept)) union.rows.push(row);
        const keptBounds = new Float64Array(memory.buffer, selection.bounds + 16 * from, 2 * kept);
        for (let i = 0; i < kept; i++) {
          union.upper.push(keptBounds[2 * i]!);
          union.lower.push(keptBounds[2 * i + 1]!);
        }
      }
      return union;
    },
    setBounds(arrays) {
      bounds.arrays = arrays;
      if (!roomFor(bounds.work, arrays.scale.length)) bounds.work = workFor(arrays.scale.length);
      bounds.version += 1;
    },
    release() {
      if (released) return;
      released = true;
      for (const helper of pool?.helpers ?? []) helper.forget(id);
      collectReleased(new WeakRef(memory));
    },
  };
}

/** Blocks workers have taken in this process, every pass (tests: a worker did take part). */
export function splitWorkerBlocks(): number {
  return workerBlocks;
}

/**
 * Tests: makes each worker a slow one, asleep `ms` holding its first block of every pass, and the caller wait `wait` ms
 * at most for a worker's block (then it gives the worker up and passes the block itself). (0, default): as served.
 */
export function slowWorkersForTests(ms: number, wait = WAIT_MS) {
  stallMs = ms;
  waitMs = wait;
}

/** The workers ready for a pass now (started on first use; a pass does not wait for one still starting). */
function readyHelpers(modules: KernelModules, threads: number): Helper[] {
  if (threads < 2 || !modules.shared) return [];
  if (pool?.modules !== modules) {
    for (const helper of pool?.helpers ?? []) helper.stop();
    exposeCollection(); // before the workers start, so that they have it too
    pool = { modules, helpers: [], started: 0 };
  }
  pool.helpers = pool.helpers.filter((h) => h.alive);
  while (pool.helpers.length < threads - 1 && pool.started < threads - 1 + REPLACEMENTS) {
    pool.helpers.push(startHelper(modules));
    pool.started += 1;
  }
  return pool.helpers.slice(0, threads - 1).filter((h) => h.ready());
}

function startHelper(modules: KernelModules): Helper {
  const control = new SharedArrayBuffer(4 * CONTROL_INTS + 8 * 3);
  const state = new Int32Array(control, 0, CONTROL_INTS);
  const floats = new Float64Array(control, 4 * CONTROL_INTS, 3);
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL('./split-worker.mjs', import.meta.url), {
    workerData: { modules: modules.shared, control, port: port2 },
    transferList: [port2 as unknown as MessagePort],
    resourceLimits: WORKER_RESOURCE_LIMITS,
  });
  worker.unref(); // an idle pool never keeps a process alive
  port1.unref();
  /** The memories handed to the worker, with the version of their bounds it has. */
  const attached = new Map<number, number>();
  let alive = true;
  const die = () => {
    alive = false;
  };
  worker.on('error', die);
  worker.on('exit', die);

  const helper: Helper = {
    get alive() {
      return alive;
    },
    ready() {
      if (!alive) return false;
      const now = Atomics.load(state, 0);
      return now === IDLE || now === MAIL || now === DONE;
    },
    start(id, memory, bounds, fn, pass) {
      if (!helper.ready()) return undefined;
      if (attached.get(id) !== bounds.version) {
        port1.postMessage({ attach: id, memory, bounds: bounds.arrays, work: bounds.work });
        attached.set(id, bounds.version);
      }
      state[AT.id] = id;
      state[AT.fn] = FUNCTIONS.indexOf(fn);
      [pass.query, pass.rows, pass.groups, pass.stride, pass.out].forEach((a, i) => {
        state[AT.args + i] = a;
      });
      state[AT.blockGroups] = pass.blockGroups;
      state[AT.blocks] = pass.blocks;
      state[AT.stall] = stallMs;
      const { select } = pass;
      state[AT.select] = select ? 1 : 0;
      if (select) {
        state[AT.count] = select.count;
        state[AT.k] = select.k;
        state[AT.shift] = select.shift;
        state[AT.sums] = select.sums;
        state[AT.kept] = select.kept;
        state[AT.bounds] = select.bounds;
        floats[0] = select.query.scale;
        floats[1] = select.query.residual;
        floats[2] = select.query.length;
      }
      // last: a worker still on a pass it was taken back from (settle) reads the generation before the rest, so what
      // it reads with this generation is this pass's; with an older one it can take no block (blocks.ts)
      Atomics.store(state, AT.generation, pass.generation);
      // the worker reads its mail whenever it wakes, so a memory posted above is there before the job is seen
      const woken = [IDLE, MAIL, DONE].some((from) => Atomics.compareExchange(state, 0, from, JOB) === from);
      if (!woken) return undefined;
      Atomics.notify(state, 0);
      /** The worker back: the blocks it took; failed or gone: given up (undefined); still on its way: null. */
      const back = (): number | undefined | null => {
        const now = Atomics.load(state, 0);
        if (now === JOB) return null;
        if (now === DONE) {
          const taken = state[AT.result]!;
          Atomics.store(state, 0, IDLE);
          return taken;
        }
        helper.stop();
        return undefined;
      };
      return {
        finish() {
          Atomics.wait(state, 0, JOB, waitMs);
          // late: given up (should it still write its block, the same rows are passed here and nobody reads its copy)
          if (Atomics.compareExchange(state, 0, JOB, ABANDONED) === JOB) {
            helper.stop();
            return undefined;
          }
          return back() ?? undefined;
        },
        settle() {
          // every block is finished, so a worker not back yet holds none: its pass is taken back, and it is free for
          // the next one rather than left out of it until it comes back
          if (Atomics.compareExchange(state, 0, JOB, IDLE) === JOB) return 0;
          return back() ?? undefined;
        },
      };
    },
    forget(id) {
      if (!attached.delete(id) || !alive) return;
      port1.postMessage({ forget: id });
      if ([IDLE, DONE].some((from) => Atomics.compareExchange(state, 0, from, MAIL) === from)) Atomics.notify(state, 0);
    },
    stop() {
      alive = false;
      attached.clear();
      void worker.terminate();
    },
  };
  return helper;
}

/**
 * Starts the workers a pass on `threads` threads takes (a pass does not wait for them): at a replica's start, so that
 * the first large copy's load does not share the cores with their start. Resolves once they are ready (or WAIT_MS on).
 */
export function startSplitWorkers(modules: KernelModules, threads: number): Promise<void> {
  readyHelpers(modules, threads);
  const helpers = pool?.modules === modules ? pool.helpers.slice(0, threads - 1) : [];
  const until = performance.now() + WAIT_MS;
  return new Promise((resolve) => {
    const check = () => (helpers.every((h) => !h.alive || h.ready()) || performance.now() > until ? resolve() : setTimeout(check, 5));
    check();
  });
}
