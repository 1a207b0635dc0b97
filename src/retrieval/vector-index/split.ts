import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { WORKER_RESOURCE_LIMITS } from '../../platform/worker-heap.ts';
import type { Kernel, KernelModules } from './kernel.ts';

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
const FAILED = 5;
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

type Helper = {
  readonly alive: boolean;
  ready(): boolean;
  /** Hands the worker a range; undefined if it cannot take it now. */
  start(id: number, memory: WebAssembly.Memory, fn: PassFunction, args: readonly number[]): Pending | undefined;
  forget(id: number): void;
  stop(): void;
};
/** A range under way: finish() waits for it and answers the function's result, or undefined (the caller passes it). */
type Pending = { finish(): number | undefined };

let pool: { modules: KernelModules; helpers: Helper[]; started: number } | undefined;
let nextId = 1;

/** The pass of one shared memory: its ranges across the pool's workers and this thread. */
export type SplitPass = {
  /** Runs kernel function `fn` over `groups` groups of four rows (args as kernel.ts has them), split; its result. */
  run(fn: PassFunction, query: number, rows: number, groups: number, stride: number, out: number): number;
  /** Workers hold this memory no more; later passes run on this thread, and the memory is freed once dropped here. */
  release(): void;
};

/** A pass over `kernel`'s shared memory, split across `threads` threads (this one included) from `minGroups` groups. */
export function splitPass(modules: KernelModules, kernel: Kernel, threads: number, minGroups: number): SplitPass {
  const id = nextId++;
  const memory = kernel.memory;
  let released = false;
  const own = (fn: PassFunction, args: readonly number[]) => {
    const f = kernel[fn] as ((...a: number[]) => number | undefined) | undefined;
    if (!f) throw new Error(`the kernel has no ${fn}`);
    return f(...args) ?? 0;
  };
  return {
    run(fn, query, rows, groups, stride, out) {
      const args = (first: number, count: number) =>
        fn === 'read' ? [rows + first * 4 * stride, count, stride] : [query, rows + first * 4 * stride, count, stride, out + first * 16];
      const helpers = released || groups < minGroups ? [] : readyHelpers(modules, threads);
      if (helpers.length === 0) return own(fn, args(0, groups));
      const parts = helpers.length + 1;
      const share = Math.ceil(groups / parts);
      const ranges = helpers.map((_, i) => [Math.min(groups, (i + 1) * share), Math.min(groups, (i + 2) * share)] as const);
      const pending = helpers.map((helper, i) => {
        const [from, to] = ranges[i]!;
        return to > from ? helper.start(id, memory, fn, args(from, to - from)) : undefined;
      });
      let result = own(fn, args(0, Math.min(share, groups)));
      pending.forEach((p, i) => {
        const [from, to] = ranges[i]!;
        if (to <= from) return;
        const answered = p?.finish();
        result |= answered ?? own(fn, args(from, to - from)); // a worker that could not: this thread passes its range
      });
      return result;
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
  const control = new SharedArrayBuffer(64);
  const state = new Int32Array(control);
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL('./split-worker.mjs', import.meta.url), {
    workerData: { modules: modules.shared, control, port: port2 },
    transferList: [port2 as unknown as MessagePort],
    resourceLimits: WORKER_RESOURCE_LIMITS,
  });
  worker.unref(); // an idle pool never keeps a process alive
  port1.unref();
  const attached = new Set<number>();
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
    start(id, memory, fn, args) {
      if (!helper.ready()) return undefined;
      if (!attached.has(id)) {
        port1.postMessage({ attach: id, memory });
        attached.add(id);
      }
      state[1] = id;
      state[2] = FUNCTIONS.indexOf(fn);
      args.forEach((a, i) => {
        state[3 + i] = a;
      });
      // the worker reads its mail whenever it wakes, so a memory posted above is there before the job is seen
      if (Atomics.compareExchange(state, 0, IDLE, JOB) !== IDLE && Atomics.compareExchange(state, 0, MAIL, JOB) !== MAIL) return undefined;
      Atomics.notify(state, 0);
      return {
        finish() {
          Atomics.wait(state, 0, JOB, WAIT_MS);
          let now = Atomics.load(state, 0);
          if (now === JOB) now = Atomics.compareExchange(state, 0, JOB, ABANDONED);
          if (now === DONE) {
            const result = state[8]!;
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
