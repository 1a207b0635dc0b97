// A worker thread's CPU priority, lowered for work nobody waits on at once (a chart drawn after the answer, spans
// exported): on two busy cores such a worker, woken by a request's thread, otherwise takes the core that request
// needs next. Linux sets a nice value per thread (/proc/thread-self names this one); elsewhere, or when not
// allowed, the thread keeps the process's priority. Plain JavaScript: workers under Node, tsx, vitest and Bun load it.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Lowers the calling thread's priority to `nice` (0 to 19; higher is lower). */
export function lowerThisThread(nice) {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // not Linux, or not allowed
  }
}
