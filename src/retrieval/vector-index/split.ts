import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { WORKER_RESOURCE_LIMITS } from '../../platform/worker-heap.ts';
import type { Kernel, KernelModules } from './kernel.ts';
import { candidates, type QueryBounds } from './rank.ts';

// A large copy's full pass split across the cores: the pass only reads memory, and one core cannot read as fast as
// two. The rows stay in ONE shared WebAssembly memory; per process, one worker per extra core instantiates the kernel
// on each memory it is handed and passes the range it is given. The handshake is a control word per worker
// (Atomics.wait/notify: microseconds, where a message costs a tenth of a millisecond and more); messages only hand a
// worker a memory, or tell it to let go of one. A dead, failed or late worker leaves its range to the caller, so
// the answer never depends on one.
//
// Giving the memory back. V8 frees a shared memory once no thread holds it, but does not count it as memory pressure
// on any heap, so nothing makes a collection happen: measured on Node 24, eight 230 MB shared memories dropped one
// after another stayed resident (1.9 GB) where the same unshared ones were freed as they went; a collection on every
// thread that held one frees it. So a copy that is released or replaced has its workers drop their instance on it and
// collect, and this thread collects until the memory is gone (collectReleased). A full collection of the thread that
// answers requests pauses it (milliseconds to tens), once per large copy released; the gc function is had through
// V8's flag, set before the workers start so that they have it too.

const IDLE = 1;
const MAIL = 2;
const JOB = 3;
const DONE = 4;
const ABANDONED = 6;

/** The kernel's functions a worker runs, by their number in the control word (split-worker.mjs has the same list). */
const FUNCTIONS = ['dots', 'dots7', 'read'] as const;
export type PassFunction = (typeof FUNCTIONS)[number];

/** How long the caller waits for a worker's range before passing it itself and giving that worker up. */
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

/** A store's per-row bounds (rank.ts) on shared buffers, so that a worker selects its range's rows as this thread does. */
export type SharedBounds = {
  readonly scale: Float32Array<SharedArrayBuffer>;
  readonly residual: Float32Array<SharedArrayBuffer>;
  readonly norm: Float32Array<SharedArrayBuffer>;
  readonly sums: Int32Array<SharedArrayBuffer>;
};

/**
 * What a pass then selects (rank.ts candidates), each thread over its range: the query's bounds, k, the relaxed pass's
 * shift (0: none), the rows passed, and where each range's kept rows go (one i32 a row, at the range's own rows).
 */
export type Selection = { query: QueryBounds; k: number; shift: number; count: number; kept: number };

/** The control word's layout: state, memory id, function, five arguments, result; then the selection's. */
const AT = { id: 1, fn: 2, args: 3, result: 8, select: 9, from: 10, count: 11, k: 12, shift: 13, kept: 14 } as const;
const CONTROL_INTS = 16;

type Job = { fn: PassFunction; args: readonly number[]; select?: { from: number; count: number; selection: Selection } };

type Helper = {
  readonly alive: boolean;
  ready(): boolean;
  /** Hands the worker a range; undefined if it cannot take it now. */
  start(id: number, memory: WebAssembly.Memory, bounds: { version: number; arrays: SharedBounds }, job: Job): Pending | undefined;
  forget(id: number): void;
  stop(): void;
};
/** A range under way: finish() waits for it and answers the result (the rows kept), or undefined (the caller passes it). */
type Pending = { finish(): number | undefined };

let pool: { modules: KernelModules; helpers: Helper[]; started: number } | undefined;
let nextId = 1;

/** The pass of one shared memory: its ranges across the pool's workers and this thread. */
export type SplitPass = {
  /** Runs kernel function `fn` over `groups` groups of four rows (args as kernel.ts has them), split; its result. */
  run(fn: PassFunction, query: number, rows: number, groups: number, stride: number, out: number): number;
  /**
   * Runs `fn` over the rows, split, and each thread selects its range's rows (rank.ts candidates, k of its own): the
   * union, in row order, which candidates() taken again over it narrows to exactly what the whole would keep.
   */
  select(fn: PassFunction, query: number, rows: number, stride: number, out: number, selection: Selection): number[];
  /** The store's bounds, again whenever they are made anew (the store grew). */
  setBounds(bounds: SharedBounds): void;
  /** Workers hold this memory no more; later passes run on this thread, and the memory is freed once dropped here. */
  release(): void;
  /** Ranges workers have passed (and selected from) so far: a range a worker could not take was passed here. */
  readonly workerRanges: number;
};

/** A pass over `kernel`'s shared memory, split across `threads` threads (this one included) from `minGroups` groups. */
export function splitPass(modules: KernelModules, kernel: Kernel, threads: number, minGroups: number): SplitPass {
  const id = nextId++;
  const memory = kernel.memory;
  /** The store's bounds (setBounds, before any selection), and how often they were made anew. */
  const bounds = { version: 0, arrays: undefined as unknown as SharedBounds };
  let released = false;
  let workerRanges = 0;
  const own = (job: Job): number => {
    const f = kernel[job.fn] as ((...a: number[]) => number | undefined) | undefined;
    if (!f) throw new Error(`the kernel has no ${job.fn}`);
    const result = f(...job.args) ?? 0;
    if (!job.select) return result;
    const { from, count, selection } = job.select;
    const dots = new Int32Array(memory.buffer, job.args[4]!, count);
    const sums = selection.shift ? { sums: bounds.arrays.sums, shift: selection.shift } : {};
    const kept = candidates(dots, bounds.arrays, selection.query, count, selection.k, { from, ...sums }).rows;
    new Int32Array(memory.buffer, selection.kept + 4 * from, kept.length).set(kept);
    return kept.length;
  };
  /** The ranges of `groups` groups: this thread's first, then one per ready worker (none below minGroups). */
  const split = (groups: number) => {
    const helpers = released || groups < minGroups ? [] : readyHelpers(modules, threads);
    const share = Math.ceil(groups / (helpers.length + 1));
    const ranges = [0, ...helpers.map((_, i) => i + 1)].map(
      (i) => [Math.min(groups, i * share), Math.min(groups, (i + 1) * share)] as const,
    );
    return { helpers, ranges };
  };
  /** Each range's job run, by a worker where one takes it, else here; each one's result, in range order. */
  const runJobs = (jobs: Job[], helpers: Helper[]): number[] => {
    const pending = helpers.map((helper, i) => helper.start(id, memory, bounds, jobs[i + 1]!));
    const results = [own(jobs[0]!)];
    pending.forEach((p, i) => {
      const answered = p?.finish();
      if (answered !== undefined) workerRanges += 1;
      results.push(answered ?? own(jobs[i + 1]!)); // a worker that could not: this thread passes its range
    });
    return results;
  };
  return {
    get workerRanges() {
      return workerRanges;
    },
    run(fn, query, rows, groups, stride, out) {
      const { helpers, ranges } = split(groups);
      const jobs = ranges.map(
        ([from, to]): Job => ({
          fn,
          args:
            fn === 'read'
              ? [rows + from * 4 * stride, to - from, stride]
              : [query, rows + from * 4 * stride, to - from, stride, out + from * 16],
        }),
      );
      return runJobs(jobs, helpers).reduce((a, b) => a | b, 0);
    },
    select(fn, query, rows, stride, out, selection) {
      const { helpers, ranges } = split(Math.ceil(selection.count / 4));
      const jobs = ranges.map(([from, to]): Job => {
        const count = Math.max(0, Math.min(selection.count, 4 * to) - 4 * from);
        return {
          fn,
          args: [query, rows + from * 4 * stride, to - from, stride, out + from * 16],
          select: { from: 4 * from, count, selection },
        };
      });
      const kept = runJobs(jobs, helpers);
      const union: number[] = [];
      jobs.forEach((job, i) => {
        for (const row of new Int32Array(memory.buffer, selection.kept + 4 * job.select!.from, kept[i]!)) union.push(row);
      });
      return union;
    },
    setBounds(arrays) {
      bounds.arrays = arrays;
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

/** The workers ready for a range now (started on first use; a pass does not wait for one still starting). */
function readyHelpers(modules: KernelModules, threads: number): Helper[] {
  if (threads < 2 || !modules.shared) return [];
  if (pool?.modules !== modules) {
    for (const helper of pool?.helpers ?? []) helper.stop();
    gcFunction(); // before the workers start, so that they have it too
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
      return now === IDLE || now === MAIL;
    },
    start(id, memory, bounds, job) {
      if (!helper.ready()) return undefined;
      if (attached.get(id) !== bounds.version) {
        port1.postMessage({ attach: id, memory, bounds: bounds.arrays });
        attached.set(id, bounds.version);
      }
      state[AT.id] = id;
      state[AT.fn] = FUNCTIONS.indexOf(job.fn);
      job.args.forEach((a, i) => {
        state[AT.args + i] = a;
      });
      state[AT.select] = job.select ? 1 : 0;
      if (job.select) {
        const { from, count, selection } = job.select;
        state[AT.from] = from;
        state[AT.count] = count;
        state[AT.k] = selection.k;
        state[AT.shift] = selection.shift;
        state[AT.kept] = selection.kept;
        floats[0] = selection.query.scale;
        floats[1] = selection.query.residual;
        floats[2] = selection.query.length;
      }
      // the worker reads its mail whenever it wakes, so a memory posted above is there before the job is seen
      if (Atomics.compareExchange(state, 0, IDLE, JOB) !== IDLE && Atomics.compareExchange(state, 0, MAIL, JOB) !== MAIL) return undefined;
      Atomics.notify(state, 0);
      return {
        finish() {
          Atomics.wait(state, 0, JOB, WAIT_MS);
          let now = Atomics.load(state, 0);
          if (now === JOB) now = Atomics.compareExchange(state, 0, JOB, ABANDONED);
          if (now === DONE) {
            const result = state[AT.result]!;
            Atomics.store(state, 0, IDLE);
            return result;
          }
          // failed, late or gone: given up (a late one may still be writing its own range, which nobody reads again)
          helper.stop();
          return undefined;
        },
      };
    },
    forget(id) {
      if (!attached.delete(id) || !alive) return;
      port1.postMessage({ forget: id });
      if (Atomics.compareExchange(state, 0, IDLE, MAIL) === IDLE) Atomics.notify(state, 0);
    },
    stop() {
      alive = false;
      attached.clear();
      void worker.terminate();
    },
  };
  return helper;
}

let gc: ((opts?: object) => unknown) | null | undefined;

/** V8's collection, had through its flag (see the top of this file); null where the engine refuses it. */
function gcFunction(): ((opts?: object) => unknown) | null {
  if (gc !== undefined) return gc;
  try {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as (opts?: object) => unknown;
  } catch {
    gc = null;
  }
  return gc;
}

/** Collections after a release, apart, until the memory is gone (a search still on it may hold it a while). */
const COLLECT_AFTER_MS = [20, 250, 1000, 4000, 15000];

function collectReleased(memory: WeakRef<WebAssembly.Memory>, attempt = 0) {
  const collect = gcFunction();
  if (!collect || attempt >= COLLECT_AFTER_MS.length) return;
  const timer = setTimeout(() => {
    collect();
    // looked at on the next turn: a WeakRef read keeps its target until the turn ends, so it is not read before collecting
    setImmediate(() => {
      if (memory.deref()) collectReleased(memory, attempt + 1);
    }).unref();
  }, COLLECT_AFTER_MS[attempt]);
  timer.unref();
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
