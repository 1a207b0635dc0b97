import type { CallerResolver } from '../platform/auth/index.ts';
import type { Database } from '../platform/db/index.ts';
import type { ChatModel, Embedder } from '../platform/gateway/index.ts';
import type { Limiter } from '../platform/limits/index.ts';
import type { Logger } from '../platform/log.ts';
import type { ObjectStore } from '../platform/objects/index.ts';
import type { PolicyEngine } from '../platform/policy/index.ts';
import type { AnswerCache } from './cache.ts';
import type { CatalogTags } from '../platform/catalog-tags.ts';
import type { CatalogEntry } from './catalog.ts';
import type { ExploreConfig } from './config.ts';
import type { CostEstimator } from './cost.ts';
import type { QueryEngine } from './engines/types.ts';
import type { ChartDrawer } from './dashboards/chart-svg.ts';
import type { ExploreMetrics } from './metrics.ts';
import type { ModelCatalog } from './models.ts';
import type { QueryResponse } from './answer.ts';

/** The pages this process is drawing, by dashboard id: a viewer waits for one here rather than polling the row. */
export type Drawings = Map<string, Promise<void>>;

/** Everything the explore domain functions need, built once by the app factory. */
export type ExploreDeps = {
  config: ExploreConfig;
  db: Database;
  policy: PolicyEngine;
  engine: QueryEngine;
  /** Step 6's estimate: a bound from table statistics, else the engine's EXPLAIN (cost.ts). */
  cost: CostEstimator;
  chat: ChatModel | undefined;
  /** Embeds the phrase of semantic_distance, with retrieval's settings (SVC_EMBED_URL, _MODEL, _DIM). */
  embedder: Embedder;
  models: ModelCatalog;
  cache: AnswerCache<QueryResponse>;
  catalog: () => Promise<CatalogEntry[]>;
  tags: CatalogTags;
  hmacKey: string;
  /** Dashboard pages (SVC_DASHBOARDS_STORE): explore writes them, the runtime reads them. */
  pages: ObjectStore;
  /** Draws a page's chart in a worker thread, started on the first chart and ended when idle. */
  charts: ChartDrawer;
  /** The pages this process is drawing after publish (dashboards/drawing.ts). */
  drawings: Drawings;
  metrics: ExploreMetrics;
  /** Per-user limits: questions that reach the model. */
  limiter: Limiter;
  logger: Logger;
  /** Who calls (SVC_AUTH_MODE); the ingress's headers when absent. */
  callers?: CallerResolver;
};
