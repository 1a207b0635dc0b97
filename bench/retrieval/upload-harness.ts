import type { Database } from '../../src/platform/db/index.ts';
import { createOfflineEmbedder } from '../../src/platform/gateway/index.ts';
import { retrievalHarness } from '../../tests/support/retrieval.ts';
import { DIM } from './datasets.ts';

/**
 * The retrieval service as the ingestion benches upload to it: the offline embedder, and SVC_RAG_PDF_WORKERS from
 * the environment when set, to compare thread counts (the service's default otherwise).
 */
export function uploadHarness(db: Database) {
  const workers = process.env.SVC_RAG_PDF_WORKERS;
  return retrievalHarness(db, {
    embedder: createOfflineEmbedder(DIM),
    conformance: false,
    ...(workers !== undefined ? { env: { SVC_RAG_PDF_WORKERS: workers } } : {}),
  });
}
