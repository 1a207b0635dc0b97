import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';

// The helper threads that take part of a large index's pass (the int8 pass is memory-bandwidth-bound, so one core
// cannot go faster; two read about twice the bytes in the same time). Per process, not per index: threads − 1
// workers, each instantiating the kernel on the shared memory of every index it is given a range of. The handshake
// is a control word per worker (Atomics.wait/notify: microseconds, where postMessage costs a tenth of a millisecond
// and more); messages only carry a new index's memory to a worker, or tell it to let go of a dropped one.
// Correctness never depends on a worker: one that is dead, failed or late leaves its range to the caller.

export type ThreadSettings = {
  /** Threads a pass may use, the caller's included; 1: every pass on the caller's thread. */
  threads: number;
  /** Rows below which a pass stays on one thread (a worker's handshake costs more than it saves). */
  minRows: number;
  /** How long the caller waits for a worker's range before passing it itself and giving that worker up. */
  waitMs: number;
};

const IDLE = 1;
const MAIL = 2;
const JOB = 3;
const DONE = 4;
const ABANDONED = 6;

let settings: ThreadSettings = { threads: defaultThreads(), minRows: 50_000, waitMs: 5_000 };
let helpers: Helper[] = [];
let binary: Uint8Array | undefined;
/** Workers started since the pool was last configured: one that keeps failing is replaced only so often. */
let started = 0;
const REPLACEMENTS = 3;

function defaultThreads(): number {
  try {
    return Math.max(1, availableParallelism());
  } catch {
    return 1;
  }
}

/** Sets how passes are split, for the whole process; 0 threads: one per available core. */
export function configureVectorThreads(next: Partial<ThreadSettings>): void {
  settings = {
    threads: next.threads === undefined ? settings.threads : next.threads === 0 ? defaultThreads() : next.threads,
    minRows: next.minRows ?? settings.minRows,
    waitMs: next.waitMs ?? settings.waitMs,
  };
  for (const helper of helpers.splice(Math.max(0, settings.threads - 1))) helper.stop();
  started = helpers.length;
}

export function vectorThreadSettings(): Readonly<ThreadSettings> {
  return settings;
}

/** The worker threads of the pool, for diagnostics and for tests that stop one. */
export function vectorThreadWorkers(): readonly Worker[] {
  return helpers.map((h) => h.worker);
}

/** A range of a pass, as kernel.wat's "dots" and "select" take it (addresses in the index's memory). */
export type RangeJob = {
  query: number;
  rows: number;
  groups: number;
  stride: number;
  out: number;
  bounds: number;
  count: number;
  k: number;
  heap: number;
  upper: number;
  qScale: number;
  qResidual: number;
  qLength: number;
  slack: number;
};

/** A worker with a range under way: `finish` waits for it; undefined when the caller must pass the range itself. */
export type Pending = { finish(): number | undefined };

let nextMemoryId = 1;
const forgotten = new FinalizationRegistry<number>((id) => {
  for (const helper of helpers) helper.forget(id);
});

/** Gives an index's shared memory an id the workers know it by; when `owner` is collected, they let go of it. */
export function registerMemory(owner: object): number {
  const id = nextMemoryId++;
  forgotten.register(owner, id);
  return id;
}

/**
 * Workers ready now to take one range each of a pass over `rows` rows, for a kernel built from `kernelBinary`: none
 * below the threshold, with one thread, or before a newly started worker is up (the pass does not wait for it).
 */
export function readyHelpers(rows: number, kernelBinary: Uint8Array): Helper[] {
  if (settings.threads < 2 || rows < Math.max(settings.minRows, 1)) return [];
  if (binary !== kernelBinary) {
    for (const helper of helpers.splice(0)) helper.stop();
    binary = kernelBinary;
    started = 0;
  }
  helpers = helpers.filter((h) => h.alive);
  while (helpers.length < settings.threads - 1 && started < settings.threads - 1 + REPLACEMENTS) {
    helpers.push(startHelper(kernelBinary));
    started++;
  }
  return helpers.filter((h) => h.ready());
}

export type Helper = {
  readonly worker: Worker;
  readonly alive: boolean;
  ready(): boolean;
  /** Hands the worker a range; undefined if it cannot take it now. */
  start(memoryId: number, memory: WebAssembly.Memory, job: RangeJob): Pending | undefined;
  forget(memoryId: number): void;
  stop(): void;
};

function startHelper(kernelBinary: Uint8Array): Helper {
  const control = new SharedArrayBuffer(64 + 4 * 8);
  const state = new Int32Array(control, 0, 16);
  const floats = new Float64Array(control, 64, 4);
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL('./kernel-worker.js', import.meta.url), {
    workerData: { binary: kernelBinary, control, port: port2 },
    transferList: [port2 as unknown as MessagePort],
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
    worker,
    get alive() {
      return alive;
    },
    ready() {
      if (!alive) return false;
      const now = Atomics.load(state, 0);
      return now === IDLE || now === MAIL;
    },
    start(memoryId, memory, job) {
      if (!helper.ready()) return undefined;
      if (!attached.has(memoryId)) {
        port1.postMessage({ attach: memoryId, memory });
        attached.add(memoryId);
      }
      state[1] = memoryId;
      state[2] = job.query;
      state[3] = job.rows;
      state[4] = job.groups;
      state[5] = job.stride;
      state[6] = job.out;
      state[7] = job.bounds;
      state[8] = job.count;
      state[9] = job.k;
      state[10] = job.heap;
      state[12] = job.upper;
      floats[0] = job.qScale;
      floats[1] = job.qResidual;
      floats[2] = job.qLength;
      floats[3] = job.slack;
      // the worker reads its mail whenever it wakes, so a memory posted above is there before the job is seen
      if (Atomics.compareExchange(state, 0, IDLE, JOB) !== IDLE && Atomics.compareExchange(state, 0, MAIL, JOB) !== MAIL) {
        return undefined;
      }
      Atomics.notify(state, 0);
      return {
        finish() {
          Atomics.wait(state, 0, JOB, settings.waitMs);
          let now = Atomics.load(state, 0);
          if (now === JOB) now = Atomics.compareExchange(state, 0, JOB, ABANDONED);
          if (now === DONE) {
            const kept = state[11]!;
            Atomics.store(state, 0, IDLE);
            return kept;
          }
          // failed, late or gone: given up (a late one may still be writing its own range, which nobody reads again)
          helper.stop();
          return undefined;
        },
      };
    },
    forget(memoryId) {
      if (!attached.delete(memoryId) || !alive) return;
      port1.postMessage({ forget: memoryId });
      if (Atomics.compareExchange(state, 0, IDLE, MAIL) === IDLE) Atomics.notify(state, 0);
    },
    stop() {
      alive = false;
      void worker.terminate();
    },
  };
  return helper;
}
