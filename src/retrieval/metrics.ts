import { Counter, Histogram } from 'prom-client';
import type { ServiceMetrics } from '../platform/metrics.ts';

export type RetrievalMetrics = ReturnType<typeof createRetrievalMetrics>;

export function createRetrievalMetrics(base: ServiceMetrics) {
  const registers = [base.registry];
  return {
    ...base,
    documentsIngested: new Counter({
      name: 'retrieval_documents_ingested_total',
      help: 'Uploads by outcome (indexed, duplicate, rejected, failed) and format',
      labelNames: ['outcome', 'format'] as const,
      registers,
    }),
    chunksIngested: new Counter({ name: 'retrieval_chunks_ingested_total', help: 'Chunks stored', registers }),
    queries: new Counter({
      name: 'retrieval_queries_total',
      help: 'Retrievals by outcome',
      labelNames: ['outcome'] as const,
      registers,
    }),
    watchScans: new Counter({
      name: 'retrieval_watch_scans_total',
      help: 'Scans of watched sources by outcome (ok, error: the source could not be read, interrupted: lease lost or stopping)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    watchScanDuration: new Histogram({
      name: 'retrieval_watch_scan_duration_seconds',
      help: 'Duration of a finished scan of a watched source',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900],
      registers,
    }),
    watchFiles: new Counter({
      name: 'retrieval_watch_files_total',
      help: 'Files met by scans, by outcome (ingested, updated, unchanged, deleted, failed, waiting: failed before and not yet retried, skipped: a link, vanished)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    queryDuration: new Histogram({
      name: 'retrieval_query_duration_seconds',
      help: 'Retrieval latency by mode (hybrid, dense, keyword), embedding included',
      labelNames: ['mode'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    // answers (POST /collections/{slug}/answer)
    answerDuration: new Histogram({
      name: 'svc_answer_seconds',
      help: 'Time to a whole answer by outcome (answered, no_context, model_failed, cancelled), retrieval included',
      labelNames: ['outcome'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    answerTokens: new Counter({
      name: 'svc_answer_tokens_total',
      help: 'Tokens the chat model reported for answers, by kind (prompt, completion)',
      labelNames: ['kind'] as const,
      registers,
    }),
    answerRefusals: new Counter({
      name: 'svc_answer_refusals_total',
      help: 'Answers not generated for lack of context (no chunk reached SVC_ANSWER_MIN_SCORE or shared a term)',
      labelNames: ['reason'] as const,
      registers,
    }),
    inventedCitations: new Counter({
      name: 'svc_answer_invented_citations_total',
      help: 'Citation markers the model wrote that name no chunk it was given, removed from the answer',
      registers,
    }),
  };
}
