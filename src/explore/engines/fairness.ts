import { EngineError } from './types.ts';

// Who waits for the embedded engine's workers, and in what order. The service's own calls (column lists, estimates,
// table sizes: short, and every question needs them) go first; users' statements then take turns, one call of one
// user at a time, so a user with many calls waiting never holds back a user with one.

/**
 * The embedded engine's pool and queue when no setting says otherwise (SVC_ENGINE_WORKERS,
 * SVC_ENGINE_USER_CONCURRENCY, SVC_ENGINE_QUEUE_TIMEOUT_MS). Two workers of 200 to 460 MiB each; one call per user,
 * below the pool's size, so that one user never holds every worker.
 */
export const ENGINE_QUEUE_DEFAULTS = { workers: 2, userConcurrency: 1, queueTimeoutMs: 30_000 } as const;

export type FairQueue<T> = {
  /** `user` undefined: a call of the service itself, served before any user's. */
  push(user: string | undefined, item: T): void;
  /** The next call to run, or undefined when none waits. */
  shift(): T | undefined;
  /** Takes a call out of the queue (its wait ran out); false when it is no longer waiting. */
  remove(item: T): boolean;
  readonly size: number;
};

export function createFairQueue<T>(): FairQueue<T> {
  const service: T[] = [];
  // A Map iterates in insertion order: the first key is the user whose turn it is; a served user moves to the back.
  const users = new Map<string, T[]>();
  let size = 0;
  return {
    push(user, item) {
      size++;
      if (user === undefined) return void service.push(item);
      const waiting = users.get(user);
      if (waiting) waiting.push(item);
      else users.set(user, [item]);
    },
    shift() {
      let item: T | undefined;
      if (service.length > 0) item = service.shift();
      else
        for (const [user, waiting] of users) {
          item = waiting.shift();
          users.delete(user);
          if (waiting.length > 0) users.set(user, waiting);
          break;
        }
      if (item !== undefined) size--;
      return item;
    },
    remove(item) {
      const at = service.indexOf(item);
      if (at >= 0) {
        service.splice(at, 1);
        size--;
        return true;
      }
      for (const [user, waiting] of users) {
        const i = waiting.indexOf(item);
        if (i < 0) continue;
        waiting.splice(i, 1);
        if (waiting.length === 0) users.delete(user);
        size--;
        return true;
      }
      return false;
    },
    get size() {
      return size;
    },
  };
}

/** A refusal of the engine's queue, with the seconds after which a retry can be served (the Retry-After header). */
export class EngineQueueError extends EngineError {
  constructor(
    kind: 'busy' | 'queue_timeout',
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(kind, message);
  }
}

/** Whole seconds until the earliest of `deadlines` (ms since the epoch), at least 1; `fallback` when there is none. */
export function secondsUntil(deadlines: Iterable<number>, now: number, fallback: number): number {
  let earliest = Number.POSITIVE_INFINITY;
  for (const d of deadlines) earliest = Math.min(earliest, d);
  if (earliest === Number.POSITIVE_INFINITY) return fallback;
  return Math.max(1, Math.ceil((earliest - now) / 1000));
}
