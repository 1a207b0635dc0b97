import type { CallerResolver } from '../platform/auth/index.ts';
import type { Database } from '../platform/db/index.ts';
import type { Embedder } from '../platform/gateway/index.ts';
import type { Limiter } from '../platform/limits/index.ts';
import type { Logger } from '../platform/log.ts';
import type { ObjectStore } from '../platform/objects/index.ts';
import type { PolicyEngine } from '../platform/policy/index.ts';
import type { Lake } from './backends/lake.ts';
import type { Search } from './backends/search.ts';
import type { RetrievalConfig } from './config.ts';
import type { CollectionIndexes } from './indexes.ts';
import type { OcrEngine, PdfWorkers } from './ingest/index.ts';
import type { KeywordIndexes } from './keyword-index/index.ts';
import type { RetrievalMetrics } from './metrics.ts';

/** Everything the retrieval domain functions need, built once by the app factory. */
export type RetrievalDeps = {
  config: RetrievalConfig;
  db: Database;
  policy: PolicyEngine;
  embedder: Embedder;
  ocr: OcrEngine;
  /** The threads PDF text is read on; absent: on the thread that answers requests. */
  pdfWorkers?: PdfWorkers | undefined;
  /** The uploaded files, one object per document (`<slug>/<document id>`). */
  originals: ObjectStore;
  indexes: CollectionIndexes;
  keywords: KeywordIndexes;
  /** Trino and the lake's tables (SVC_TRINO_URL); absent: no collection can be on the lake. */
  lake?: Lake | undefined;
  /** OpenSearch and the search backend's indexes (SVC_OPENSEARCH_URL); absent: no collection can be on it. */
  search?: Search | undefined;
  metrics: RetrievalMetrics;
  /** Per-user limits: embeddings per upload now, answers once /answer exists. */
  limiter: Limiter;
  logger: Logger;
  /** Who calls (SVC_AUTH_MODE); the ingress's headers when absent. */
  callers?: CallerResolver;
};
