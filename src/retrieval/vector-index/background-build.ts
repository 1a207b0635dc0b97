import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { WORKER_RESOURCE_LIMITS } from '../../platform/worker-heap.ts';
import type { BuildAnswer, BuildRequest } from './build-thread.ts';
import type { KernelModules } from './kernel.ts';
import { rowBlockBytes, type RowStore } from './rows.ts';

// A copy's clusters built off the thread that answers requests: rows 0..count-1 are copied, a block at a time with a
// turn of the event loop between blocks (searches go on meanwhile), to a worker thread that builds the clusters on
// its own copy and answers with the order and the layout (build-thread.ts). The worker ends after each build, so no
// idle thread holds a copy's rows; builds run one at a time in the process, each holding a second copy of its rows.
// Every block goes through one shared stage, written again once the worker says it took the last: a new buffer a
// block (1.5 MiB each, 489 at a million rows) came from malloc's heap, which kept about 450 MiB of them resident for
// good once freed (RSS serving 1440 MiB, 975 with glibc's mmap threshold fixed, measured on 11-29).

/** Rows per block sent: 1.5 MiB at 768 dimensions, copied in a few milliseconds. */
const BLOCK_ROWS = 2048;

export type BuildResult = Exclude<BuildAnswer, { failed: string }>;
export type BackgroundBuild = {
  /** The answer; undefined once cancelled; rejects when the thread failed. */
  readonly done: Promise<BuildResult | undefined>;
  /** Milliseconds the calling thread spent copying the rows out, in all and the longest at once. */
  readonly heldMs: number;
  readonly pauseMs: number;
  /** Stops the build (the thread ends); `done` then gives undefined. */
  cancel(): void;
};

let queue: Promise<unknown> = Promise.resolve();

export function buildInBackground(modules: KernelModules, store: RowStore, dim: number, count: number, relaxed?: boolean): BackgroundBuild {
  let cancelled = false;
  let worker: Worker | undefined;
  let heldMs = 0;
  let pauseMs = 0;
  const run = async (): Promise<BuildResult | undefined> => {
    if (cancelled) return undefined;
    const request: BuildRequest = { modules, dim, count, ...(relaxed === false ? { relaxed } : {}) };
    const thread = new Worker(new URL('./build-worker.mjs', import.meta.url), {
      workerData: request,
      resourceLimits: WORKER_RESOURCE_LIMITS,
    });
    worker = thread;
    thread.unref(); // a build under way never keeps the process from ending
    /** The worker took the block on the stage: it may be written again. */
    let taken: () => void = () => undefined;
    const answer = new Promise<BuildAnswer>((resolve, reject) => {
      thread.on('message', (message: BuildAnswer | { taken: true }) => ('taken' in message ? taken() : resolve(message)));
      thread.once('error', reject);
      thread.once('exit', (code) => reject(new Error(`the clusters' build thread stopped before it answered (exit code ${code})`)));
    });
    answer.catch(() => undefined); // awaited below unless cancelled first
    const stage = new SharedArrayBuffer(rowBlockBytes(dim, BLOCK_ROWS));
    try {
      for (let from = 0; from < count && !cancelled; from += BLOCK_ROWS) {
        const copying = performance.now();
        const block = store.exportRows(from, Math.min(count, from + BLOCK_ROWS), stage);
        const took = new Promise<void>((resolve) => {
          taken = resolve;
        });
        thread.postMessage({ block });
        heldMs += performance.now() - copying;
        pauseMs = Math.max(pauseMs, performance.now() - copying);
        // a worker that failed answers (or stops) instead: the loop ends there
        if ((await Promise.race([took.then(() => true), answer.then(() => false)])) === false) break;
        await nextTurn();
      }
      if (cancelled) return undefined;
      thread.postMessage({ build: true });
      const got = await answer;
      if ('failed' in got) throw new Error(got.failed);
      return cancelled ? undefined : got;
    } catch (error) {
      if (cancelled) return undefined;
      throw error;
    } finally {
      void thread.terminate();
    }
  };
  const done = queue.then(run);
  queue = done.catch(() => undefined);
  return {
    done,
    get heldMs() {
      return heldMs;
    },
    get pauseMs() {
      return pauseMs;
    },
    cancel() {
      cancelled = true;
      void worker?.terminate();
    },
  };
}
