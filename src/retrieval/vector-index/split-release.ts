import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// Giving a split copy's memory back (split.ts). V8 frees a shared memory once no thread holds it, but does not count
// it as memory pressure on any heap, so nothing makes a collection happen: measured on Node 24, eight 230 MB shared
// memories dropped one after another stayed resident (1.9 GB) where the same unshared ones were freed as they went; a
// collection on every thread that held one frees it. So a copy that is released or replaced has its workers drop their
// instance on it and collect (split-worker.mjs), and this thread collects until the memory is gone (collectReleased).
// A full collection of the thread that answers requests pauses it (milliseconds to tens), once per large copy
// released; the gc function is had through V8's flag, set before the workers start so that they have it too.

let gc: ((opts?: object) => unknown) | null | undefined;

/** V8's collection, had through its flag (see the top of this file); null where the engine refuses it. Called before
 * the split's workers start, so that they have it too. */
export function exposeCollection(): ((opts?: object) => unknown) | null {
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
/** Released memories not yet known to be gone (tests wait on them rather than on a guess of how long it takes). */
const releasedMemories = new Set<WeakRef<WebAssembly.Memory>>();

export function collectReleased(memory: WeakRef<WebAssembly.Memory>, attempt = 0) {
  const collect = exposeCollection();
  if (!collect || attempt >= COLLECT_AFTER_MS.length) return;
  if (attempt === 0) releasedMemories.add(memory);
  const timer = setTimeout(() => {
    collect();
    // looked at on the next turn: a WeakRef read keeps its target until the turn ends, so it is not read before collecting
    setImmediate(() => {
      if (memory.deref()) collectReleased(memory, attempt + 1);
      else releasedMemories.delete(memory);
    }).unref();
  }, COLLECT_AFTER_MS[attempt]);
  timer.unref();
}

/** Released copies' memories this process still holds after the collections so far (0 once every one is gone). */
export function releasedSplitMemoriesHeld(): number {
  for (const memory of releasedMemories) if (!memory.deref()) releasedMemories.delete(memory);
  return releasedMemories.size;
}
