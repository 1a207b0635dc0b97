import { setTimeout as sleep } from 'node:timers/promises';
import { Hono } from 'hono';
import type { Env } from '../platform/config.ts';
import { openDashboardPages } from '../platform/dashboard-pages.ts';
import { dashboardKeys } from '../platform/dashboard-signature.ts';
import { auditHeadRoutes } from '../platform/audit/index.ts';
import { loadMigrations, migrate, migratePlatform } from '../platform/db/index.ts';
import { configuredEmbedder, createOpenAiChat } from '../platform/gateway/index.ts';
import { createApp, requireCaller, type AppEnv } from '../platform/http.ts';
import { apiRoutes, documentRoutes } from '../platform/openapi/index.ts';
import { createLimiter, loadLimitSettings } from '../platform/limits/index.ts';
import type { Logger } from '../platform/log.ts';
import { createMetrics } from '../platform/metrics.ts';
import type { ServiceDefinition } from '../platform/service.ts';
import { traceLinks, type TraceLinks } from '../platform/web/trace-links.ts';
import { createAnswerCache } from './cache.ts';
import { createCostEstimator } from './cost.ts';
import { createChartDrawer } from './dashboards/chart-svg.ts';
import { resumeDrawings } from './dashboards/drawing.ts';
import { pageStore } from './dashboards/page-store.ts';
import { cleanupDeletedDashboards } from './dashboards/maintenance.ts';
import { consoleRoutes } from './console/page.ts';
import { DEFAULT_TAGS_FILE, loadCatalogTags } from '../platform/catalog-tags.ts';
import { readCatalog, type CatalogEntry } from './catalog.ts';
import { loadExploreConfig, type ExploreConfig } from './config.ts';
import type { ExploreDeps } from './deps.ts';
import { exploreProblem } from './errors.ts';
import { readFile } from 'node:fs/promises';
import { createEmbeddedEngine } from './engines/embedded.ts';
import { createTrinoEngine } from './engines/trino.ts';
import type { QueryEngine } from './engines/types.ts';
import { createExploreMetrics } from './metrics.ts';
import { createModelCatalog } from './models.ts';
import type { QueryResponse } from './answer.ts';
import { DEFAULTS } from './pipeline.ts';
import { dashboardRoutes } from './routes/dashboards.ts';
import { miscRoutes } from './routes/misc.ts';
import { queryRoutes } from './routes/query.ts';
import { workbenchRoutes } from './routes/workbench.ts';

const EXPLORE_DOCUMENT = {
  title: 'svc explore',
  version: '1',
  description:
    'Questions in plain language answered with validated read-only SQL on Trino (or the embedded sample), and the dashboards they publish.',
};

/**
 * `devIdentity`: the console has a sign-in box (svc dev, and apps built by tests); never under `svc serve`.
 * `traceLinks`: where the console links a question's trace (tracing on and SVC_TRACKER_URL set).
 */
export function createExploreApp(
  deps: ExploreDeps,
  opts: { devIdentity?: boolean; traceLinks?: TraceLinks | undefined } = {},
): Hono<AppEnv> {
  const app = createApp({
    service: 'explore',
    logger: deps.logger,
    metrics: deps.metrics,
    ready: () => deps.db.ping(),
    maxBodyBytes: deps.config.MAX_JSON_BYTES,
    domainProblem: exploreProblem,
    policy: deps.policy,
    ...(deps.callers ? { callers: deps.callers } : {}),
  });
  // The console is open (it asks for an identity outside an ingress); every API route needs a caller.
  app.route(
    '/',
    consoleRoutes({ devIdentity: opts.devIdentity ?? true, knownRoles: () => deps.policy.knownRoles?.(), traceLinks: opts.traceLinks }),
  );
  const api = apiRoutes();
  api.use(requireCaller);
  api.route('/', queryRoutes(deps));
  api.route('/', miscRoutes(deps));
  api.route('/', workbenchRoutes(deps));
  api.route('/dashboards', dashboardRoutes(deps));
  api.route('/audit', auditHeadRoutes(deps.db));
  app.route('/', documentRoutes(api, EXPLORE_DOCUMENT));
  app.route('/', api);
  return app;
}

/** Builds the explore dependencies from configuration; the engine is passed in (embedded or Trino). */
export async function exploreDeps(input: {
  config: ExploreConfig;
  db: ExploreDeps['db'];
  policy: ExploreDeps['policy'];
  engine: QueryEngine;
  logger: Logger;
  dataDir: string;
  /** Where the page store's S3 settings come from (SVC_S3_ENDPOINT_URL, credentials); none for a folder. */
  env?: Env;
}): Promise<ExploreDeps> {
  const { config, logger } = input;
  const chat = config.LLM_URL
    ? createOpenAiChat({ baseURL: config.LLM_URL, ...(config.LLM_API_KEY ? { apiKey: config.LLM_API_KEY } : {}) })
    : undefined;
  if (!chat) logger.warn('SVC_LLM_URL is not set: questions are answered by the offline planner, the offline fallback');
  const tags = await loadCatalogTags(config.CATALOG_TAGS_FILE ?? DEFAULT_TAGS_FILE);
  let catalog: { at: number; entries: Promise<CatalogEntry[]> } | undefined;
  const metrics = createExploreMetrics(createMetrics('explore'));
  return {
    config,
    db: input.db,
    policy: input.policy,
    engine: input.engine,
    cost: createCostEstimator(input.engine, {
      limit: config.COST_BYTES_LIMIT,
      statsTtlSeconds: config.COST_STATS_TTL,
      explainTtlSeconds: config.QUERY_CACHE_TTL,
      explainCacheSize: config.QUERY_CACHE_SIZE,
      defaults: DEFAULTS,
    }),
    chat,
    embedder: configuredEmbedder(config, logger),
    models: createModelCatalog(chat, config.LLM_MODEL),
    cache: createAnswerCache<QueryResponse>({
      size: config.QUERY_CACHE_SIZE,
      ttlSeconds: config.QUERY_CACHE_TTL,
      maxBytes: config.QUERY_CACHE_BYTES,
    }),
    catalog: () => {
      if (!catalog || Date.now() - catalog.at > config.CATALOG_REFRESH_SECONDS * 1000) {
        catalog = { at: Date.now(), entries: readCatalog(input.engine, config.EXPLORE_FALLBACK_CATALOGS, tags) };
        catalog.entries.catch(() => (catalog = undefined));
      }
      return catalog.entries;
    },
    tags,
    hmacKey: (await dashboardKeys(config, input.dataDir, logger)).current,
    pages: openDashboardPages(config, input.dataDir, input.env ?? {}),
    charts: createChartDrawer(),
    drawings: new Map(),
    metrics,
    limiter: createLimiter({ db: input.db, policy: input.policy, limits: loadLimitSettings(input.env ?? {}), registry: metrics.registry }),
    logger,
  };
}

/** Trino when SVC_TRINO_URL is set (and not under `svc dev`), else the embedded sample. */
export async function openEngine(config: ExploreConfig, opts: { embedded: boolean; logger: Logger }): Promise<QueryEngine> {
  if (!config.TRINO_URL || opts.embedded)
    return createEmbeddedEngine({
      workers: config.ENGINE_WORKERS,
      userConcurrency: config.ENGINE_USER_CONCURRENCY,
      queueTimeoutMs: config.ENGINE_QUEUE_TIMEOUT_MS,
    });
  opts.logger.info({ url: config.TRINO_URL, serviceUser: config.TRINO_SERVICE_USER }, 'statements run on Trino as the caller');
  return createTrinoEngine({
    url: config.TRINO_URL,
    ca: config.TRINO_CA_FILE ? await readFile(config.TRINO_CA_FILE, 'utf8') : undefined,
    serviceUser: config.TRINO_SERVICE_USER,
    serviceToken: config.TRINO_SERVICE_TOKEN,
    metadataTimeoutMs: config.QUERY_TIMEOUT_MS,
  });
}

export const exploreService: ServiceDefinition = {
  name: 'explore',
  defaultPort: 8081,
  portSetting: 'EXPLORE_PORT',
  checkConfig: loadExploreConfig,
  migrate: async (db) => [
    ...(await migratePlatform(db)),
    ...(await migrate(db, 'explore', await loadMigrations(new URL('./migrations/', import.meta.url)))),
  ],
  async start({ env, shared, logger }) {
    const config = loadExploreConfig(env);
    const engine = await openEngine(config, { embedded: shared.embedded, logger });
    const deps = await exploreDeps({
      config,
      db: shared.db,
      policy: shared.policy,
      engine,
      logger,
      dataDir: shared.platform.DATA_DIR,
      env,
    });
    deps.callers = shared.callers;
    shared.auditHeads?.expose(deps.metrics.registry);
    // pages left half-way by a process that stopped mid-drawing are drawn again, at start and with the cleanup
    const resume = () =>
      void resumeDrawings(pageStore(deps)).catch((err) => logger.warn({ err: String(err) }, 'resuming page drawings failed'));
    resume();
    const cleanup = setInterval(() => {
      void cleanupDeletedDashboards(shared.db, deps.pages).catch((err) => logger.warn({ err: String(err) }, 'dashboard cleanup failed'));
      resume();
    }, 600_000);
    cleanup.unref();
    return {
      app: createExploreApp(deps, { devIdentity: shared.embedded, traceLinks: traceLinks(shared.platform) }),
      close: async () => {
        clearInterval(cleanup);
        // pages being drawn are stored before the database closes, for as long as a viewer would wait for them
        await Promise.race([Promise.allSettled(deps.drawings.values()), sleep(config.DASHBOARD_PAGE_WAIT_MS, undefined, { ref: false })]);
        await deps.charts.close();
        await engine.close();
        // leased question and byte units go back to the bucket for the other replicas (else they expire, spent)
        await deps.limiter.close?.().catch((err: unknown) => logger.warn({ err: String(err) }, 'could not give leased units back'));
      },
    };
  },
};
