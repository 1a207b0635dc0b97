import { Counter, Histogram } from 'prom-client';
import type { ServiceMetrics } from '../platform/metrics.ts';

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
