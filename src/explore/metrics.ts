import { Counter, Histogram } from 'prom-client';
import type { ServiceMetrics } from '../platform/metrics.ts';
import { exploreProblem } from './errors.ts';

export type ExploreMetrics = ReturnType<typeof createExploreMetrics>;

export function createExploreMetrics(base: ServiceMetrics) {
  const registers = [base.registry];
  return {
    ...base,
    queryDuration: new Histogram({
      name: 'explore_query_duration_seconds',
      help: 'POST /query duration, model and engine included',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    queries: new Counter({ name: 'explore_query_total', help: 'POST /query by outcome', labelNames: ['outcome'] as const, registers }),
  };
}

/** One POST /query, timed and counted by outcome: ok, cached, or the status it was refused with. */
export async function measureQuery<T extends { cached: boolean }>(metrics: ExploreMetrics, answer: () => Promise<T>): Promise<T> {
  const started = performance.now();
  let outcome = 'error';
  try {
    const result = await answer();
    outcome = result.cached ? 'cached' : 'ok';
    return result;
  } catch (err) {
    const status = (exploreProblem(err) ?? (err as { status?: unknown })).status;
    if (typeof status === 'number') outcome = `http_${status}`;
    throw err;
  } finally {
    metrics.queries.inc({ outcome });
    metrics.queryDuration.observe((performance.now() - started) / 1000);
  }
}
