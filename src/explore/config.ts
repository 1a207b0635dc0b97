import { flag, int, list, loadConfig, optionalStr, str, url, type Env } from '../platform/config.ts';
import { ENGINE_QUEUE_DEFAULTS } from './engines/fairness.ts';

// Explore settings, with the specification's defaults.
export const exploreShape = {
  SQL_AUTO_LIMIT: int(10_000, 1),
  MAX_JSON_BYTES: int(1_048_576, 1024),
  COST_BYTES_LIMIT: int(1_073_741_824, 0),
  COST_GATE: flag(true),
  COST_STATS_TTL: int(300, 0),
  QUERY_CACHE_TTL: int(300, 0),
  QUERY_CACHE_SIZE: int(256, 0),
  QUERY_CACHE_BYTES: int(64 * 1024 * 1024, 0),
  MAX_RESULT_BYTES: int(16 * 1024 * 1024, 1),
  SESSION_TTL: int(3600, 1),
  PII_BYPASS_ROLES: list(['svc-admin', 'svc-engineer']),
  PII_REDACTION: str('***'),
  // semantic_distance embeds its phrase with retrieval's embedder settings (docs/explore.md, "Hybrid SQL")
  EMBED_URL: url(),
  EMBED_API_KEY: optionalStr(),
  EMBED_MODEL: str('svc-embed'),
  EMBED_DIM: int(768, 1),
  LLM_URL: url(),
  LLM_API_KEY: optionalStr(),
  LLM_MODEL: str('svc-chat'),
  EXPLORE_FALLBACK_CATALOGS: list(['tpch', 'tpcds', 'postgresql', 'iceberg']),
  CATALOG_TAGS_FILE: optionalStr(),
  CATALOG_REFRESH_SECONDS: int(300, 1),
  QUERY_TIMEOUT_MS: int(60_000, 1),
  // The embedded engine (docs/explore.md): workers of 200 to 460 MiB each, a user's calls at once, a call's wait.
  ENGINE_WORKERS: int(ENGINE_QUEUE_DEFAULTS.workers, 1),
  ENGINE_USER_CONCURRENCY: int(ENGINE_QUEUE_DEFAULTS.userConcurrency, 1),
  ENGINE_QUEUE_TIMEOUT_MS: int(ENGINE_QUEUE_DEFAULTS.queueTimeoutMs, 1),
  // Trino: when TRINO_URL is unset, statements run on the embedded sample engine.
  TRINO_URL: url(),
  TRINO_CA_FILE: optionalStr(),
  TRINO_SERVICE_USER: str('svc-service'),
  TRINO_SERVICE_TOKEN: optionalStr(),
  DASHBOARD_HMAC_KEY: optionalStr(),
  DASHBOARD_HMAC_KEY_OLD: optionalStr(),
  DASHBOARDS_STORE: optionalStr(),
  DASHBOARDS_DIR: optionalStr(),
  DASHBOARDS_URL: str('http://localhost:8090'),
  /**
   * How long a request waits for a page still being drawn (just published) before a 503 with Retry-After: the chart is
   * drawn at a low CPU priority, which a loaded machine can hold back for seconds. Under the runtime's own 30 s wait.
   */
  DASHBOARD_PAGE_WAIT_MS: int(20_000, 0),
};

export type ExploreConfig = ReturnType<typeof loadExploreConfig>;

export const loadExploreConfig = (env: Env) => loadConfig(exploreShape, env);
