import { Hono } from 'hono';
import { loadMigrations, migrate, migratePlatform } from '../platform/db/index.ts';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { configuredEmbedder, type Embedder } from '../platform/gateway/index.ts';
import { auditHeadRoutes } from '../platform/audit/index.ts';
import { forbidden } from '../platform/errors.ts';
import { openObjectStore } from '../platform/objects/index.ts';
import { createApp, requireCaller, type AppEnv } from '../platform/http.ts';
import { apiRoutes, documentRoutes } from '../platform/openapi/index.ts';
import { createLimiter, loadLimitSettings } from '../platform/limits/index.ts';
import type { Logger } from '../platform/log.ts';
import { createMetrics } from '../platform/metrics.ts';
import { decideConsole } from '../platform/policy/index.ts';
import type { ServiceDefinition } from '../platform/service.ts';
import { traceLinks, type TraceLinks } from '../platform/web/trace-links.ts';
import { createLake, createSearch, type Lake, type Search } from './backends/index.ts';
import { loadRetrievalConfig, type RetrievalConfig } from './config.ts';
import { consoleRoutes } from './console/page.ts';
import type { RetrievalDeps } from './deps.ts';
import { retrievalProblem } from './errors.ts';
import { createCollectionIndexes } from './indexes.ts';
import { createOcrEngine, createPdfWorkers } from './ingest/index.ts';
import { createKeywordIndexes } from './keyword-index/index.ts';
import { createRetrievalMetrics } from './metrics.ts';
import { startOriginalsSweep } from './originals.ts';
import { answerRoutes } from './routes/answer.ts';
import { auditRoutes } from './routes/audit.ts';
import { collectionRoutes } from './routes/collections.ts';
import { documentActionRoutes } from './routes/document-actions.ts';
import { collectionDocumentRoutes } from './routes/documents.ts';
import { originalRoutes } from './routes/originals.ts';
import { pageRoutes } from './routes/pages.ts';
import { queryRoutes } from './routes/query.ts';
import { importRoutes } from './routes/imports.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { uploadProgressRoutes } from './routes/uploads.ts';
import { createUploadProgress } from './upload-progress.ts';
import { startWatcher } from './watch/watcher.ts';

const RETRIEVAL_DOCUMENT = {
  title: 'svc retrieval',
  version: '1',
  description:
    'Collections of documents, ingested (extracted, chunked, embedded) and queried by meaning and by keyword, answered with citations.',
};

/**
 * `devIdentity`: the console has a sign-in box (svc dev, and apps built by tests); never under `svc serve`.
 * `traceLinks`: where the console links an answer's trace (tracing on and SVC_TRACKER_URL set).
 */
export function createRetrievalApp(
  deps: RetrievalDeps,
  opts: { devIdentity?: boolean; traceLinks?: TraceLinks | undefined } = {},
): Hono<AppEnv> {
  const app = createApp({
    service: 'retrieval',
    logger: deps.logger,
    metrics: deps.metrics,
    ready: () => deps.db.ping(),
    policy: deps.policy,
    maxBodyBytes: deps.config.MAX_JSON_BYTES,
    domainProblem: retrievalProblem,
    ...(deps.callers ? { callers: deps.callers } : {}),
    // an upload streams to a temporary file under SVC_MAX_UPLOAD_BYTES, never into memory
    streamsBody: (c) => c.req.method === 'POST' && /^\/collections\/[^/]+\/documents$/.test(c.req.path),
  });
  app.use('/', async (c, next) => {
    // Outside an ingress the page asks for an identity to send; behind one, the console decision says who gets it.
    const caller = await c.var.callers.optionalCallerFrom(c.req.raw.headers);
    if (caller) {
      const decision = await decideConsole(deps.policy, caller, 'retrieval');
      if (!decision.allow) throw forbidden(`Not allowed to use the retrieval console: ${decision.reason}`);
    }
    await next();
  });
  app.route(
    '/',
    consoleRoutes({ devIdentity: opts.devIdentity ?? true, knownRoles: () => deps.policy.knownRoles?.(), traceLinks: opts.traceLinks }),
  );
  // every API route needs a caller
  const api = apiRoutes();
  api.use(requireCaller);
  api.route('/collections', collectionRoutes(deps));
  // where the uploads this replica receives are (in this process only: see upload-progress.ts)
  const uploads = createUploadProgress();
  api.route('/collections', collectionDocumentRoutes(deps, uploads));
  api.route('/collections', uploadProgressRoutes(uploads));
  api.route('/collections', documentActionRoutes(deps));
  api.route('/collections', queryRoutes(deps));
  api.route('/collections', answerRoutes(deps));
  api.route('/collections', pageRoutes(deps));
  api.route('/collections', originalRoutes(deps));
  api.route('/collections', importRoutes(deps));
  api.route('/sessions', sessionRoutes(deps));
  api.route('/audit', auditRoutes(deps));
  api.route('/audit', auditHeadRoutes(deps.db));
  app.route('/', documentRoutes(api, RETRIEVAL_DOCUMENT));
  app.route('/', api);
  return app;
}

export function createEmbedder(config: RetrievalConfig, logger: Logger): Embedder {
  return configuredEmbedder(config, logger);
}

/** The lake when SVC_TRINO_URL is set (and not under `svc dev`); without it no collection can be on the lake. */
export async function openLake(config: RetrievalConfig, opts: { embedded: boolean; logger: Logger }): Promise<Lake | undefined> {
  if (!config.TRINO_URL || opts.embedded) {
    if (config.RAG_DEFAULT_BACKEND === 'lake')
      opts.logger.warn('SVC_RAG_DEFAULT_BACKEND is lake but SVC_TRINO_URL is not set (or svc dev): creating a collection answers 503');
    return undefined;
  }
  opts.logger.info({ url: config.TRINO_URL, schema: config.RAG_LAKE_SCHEMA }, 'lake collections on Trino');
  return createLake({
    connection: {
      url: config.TRINO_URL,
      ca: config.TRINO_CA_FILE ? await readFile(config.TRINO_CA_FILE, 'utf8') : undefined,
      source: 'svc-retrieval',
    },
    serviceUser: config.TRINO_SERVICE_USER,
    serviceToken: config.TRINO_SERVICE_TOKEN,
    schema: config.RAG_LAKE_SCHEMA,
    timeoutMs: config.RAG_LAKE_TIMEOUT_MS,
    insertChunks: config.RAG_LAKE_INSERT_CHUNKS,
    keywordMaxChunks: config.RAG_KEYWORD_INDEX_MAX_CHUNKS,
    // the credentials of the other stores; the endpoint the lake's own
    objects: {
      ...(config.watch.s3.region ? { region: config.watch.s3.region } : {}),
      ...(config.watch.s3.accessKeyId
        ? { accessKeyId: config.watch.s3.accessKeyId, secretAccessKey: config.watch.s3.secretAccessKey }
        : {}),
      ...(config.RAG_LAKE_S3_ENDPOINT_URL ? { endpoint: config.RAG_LAKE_S3_ENDPOINT_URL } : {}),
    },
  });
}

/** OpenSearch when SVC_OPENSEARCH_URL is set (and not under `svc dev`); without it no collection can be on the search backend. */
export async function openSearch(config: RetrievalConfig, opts: { embedded: boolean; logger: Logger }): Promise<Search | undefined> {
  if (!config.OPENSEARCH_URL || opts.embedded) {
    if (config.RAG_DEFAULT_BACKEND === 'search')
      opts.logger.warn(
        'SVC_RAG_DEFAULT_BACKEND is search but SVC_OPENSEARCH_URL is not set (or svc dev): creating a collection answers 503',
      );
    return undefined;
  }
  opts.logger.info({ url: config.OPENSEARCH_URL, prefix: config.RAG_SEARCH_INDEX_PREFIX }, 'search-backend collections on OpenSearch');
  return createSearch({
    url: config.OPENSEARCH_URL,
    user: config.OPENSEARCH_USER,
    password: config.OPENSEARCH_PASSWORD,
    ca: config.OPENSEARCH_CA_FILE ? await readFile(config.OPENSEARCH_CA_FILE, 'utf8') : undefined,
    indexPrefix: config.RAG_SEARCH_INDEX_PREFIX,
    replicas: config.RAG_SEARCH_REPLICAS,
    knn: config.RAG_SEARCH_KNN,
    efSearch: config.RAG_SEARCH_EF_SEARCH,
    timeoutMs: config.RAG_SEARCH_TIMEOUT_MS,
    bulkChunks: config.RAG_SEARCH_BULK_CHUNKS,
    dim: config.EMBED_DIM,
  });
}

export const retrievalService: ServiceDefinition = {
  name: 'retrieval',
  defaultPort: 8080,
  portSetting: 'RETRIEVAL_PORT',
  checkConfig: loadRetrievalConfig,
  migrate: async (db) => [
    ...(await migratePlatform(db)),
    ...(await migrate(db, 'retrieval', await loadMigrations(new URL('./migrations/', import.meta.url)))),
  ],
  async start({ env, shared, logger }) {
    const config = loadRetrievalConfig(env);
    const idleMs = config.RAG_EXTRACT_IDLE_SECONDS * 1000;
    const ocr = createOcrEngine({ langs: ['eng', 'fra'], idleMs });
    const pdfWorkers = config.RAG_PDF_WORKERS > 0 ? createPdfWorkers(config.RAG_PDF_WORKERS, { idleMs }) : undefined;
    const metrics = createRetrievalMetrics(createMetrics('retrieval'));
    const deps: RetrievalDeps = {
      config,
      db: shared.db,
      policy: shared.policy,
      embedder: createEmbedder(config, logger),
      ocr,
      originals: openObjectStore(config.ORIGINALS_STORE ?? join(shared.platform.DATA_DIR, 'originals'), env),
      pdfWorkers,
      indexes: createCollectionIndexes(
        config.EMBED_DIM,
        config.RAG_MEMORY_INDEX_MAX_CHUNKS,
        config.RAG_FLOAT_CACHE_BYTES,
        config.RAG_PRUNING_FROM_CHUNKS,
        logger,
      ),
      keywords: createKeywordIndexes(config.RAG_KEYWORD_INDEX_MAX_CHUNKS),
      lake: await openLake(config, { embedded: shared.embedded, logger }),
      search: await openSearch(config, { embedded: shared.embedded, logger }),
      metrics,
      limiter: createLimiter({ db: shared.db, policy: shared.policy, limits: loadLimitSettings(env), registry: metrics.registry }),
      logger,
      callers: shared.callers,
    };
    shared.auditHeads?.expose(metrics.registry);
    // watched sources are scanned by every replica that may read them, one replica per source at a time
    const watcher =
      config.watch.roots.length > 0 ? startWatcher(deps, config.watch, { pollSeconds: config.WATCH_POLL_SECONDS }) : undefined;
    if (!watcher) logger.info('SVC_WATCH_ROOTS is empty: collections cannot watch folders or buckets');
    const sweep = startOriginalsSweep(deps);
    return {
      app: createRetrievalApp(deps, { devIdentity: shared.embedded, traceLinks: traceLinks(shared.platform) }),
      close: async () => {
        sweep.stop();
        await watcher?.stop();
        await ocr.close();
        await pdfWorkers?.close();
        await deps.search?.close();
        await deps.limiter.close?.().catch((err: unknown) => logger.warn({ err: String(err) }, 'could not give leased units back'));
      },
    };
  },
};
