import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

// How late the event loop runs timers: the time a request waits before its handler starts, whatever the cause (a
// statement on the HTTP thread, a parser that runs long). One monitor per process, shared by every service in it.

/** The length of one measuring window. */
export const EVENT_LOOP_WINDOW_MS = 10_000;

export type EventLoopDelay = { p99: number; max: number; window_s: number };

let histogram: IntervalHistogram | undefined;
let previous: { p99: number; max: number } = { p99: 0, max: 0 };

const ms = (ns: number) => Math.round(ns / 1e4) / 100;

function start(): IntervalHistogram {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  setInterval(() => {
    previous = { p99: h.percentile(99), max: h.max };
    h.reset();
  }, EVENT_LOOP_WINDOW_MS).unref();
  return h;
}

/**
 * The event loop's delay in ms over the last complete window and the current one (the worse of the two): p99 and
 * the longest single delay. Constant time, so /health stays quick to answer.
 */
export function eventLoopDelay(): EventLoopDelay {
  histogram ??= start();
  // an empty histogram reports its percentiles and max as 0, but its min as a huge number: guard on count
  const current = histogram.count > 0 ? { p99: histogram.percentile(99), max: histogram.max } : { p99: 0, max: 0 };
  return {
    p99: ms(Math.max(previous.p99, current.p99)),
    max: ms(Math.max(previous.max, current.max)),
    window_s: EVENT_LOOP_WINDOW_MS / 1000,
  };
}

/** Starts measuring now, so the first /health already covers the time since start-up. */
export function watchEventLoop(): void {
  histogram ??= start();
}
