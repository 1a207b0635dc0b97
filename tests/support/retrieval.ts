import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallerResolver } from '../../src/platform/auth/index.ts';
import type { Database } from '../../src/platform/db/index.ts';
import type { Embedder } from '../../src/platform/gateway/index.ts';
import { createFolderStore, type ObjectStore } from '../../src/platform/objects/index.ts';
import { createLogger } from '../../src/platform/log.ts';
import { createMetrics } from '../../src/platform/metrics.ts';
import { createLimiter, loadLimitSettings } from '../../src/platform/limits/index.ts';
import { createWasmPolicyEngine } from '../../src/platform/policy/index.ts';
import { loadRetrievalConfig } from '../../src/retrieval/config.ts';
import type { RetrievalDeps } from '../../src/retrieval/deps.ts';
import { createCollectionIndexes } from '../../src/retrieval/indexes.ts';
import { createOcrEngine, createPdfWorkers } from '../../src/retrieval/ingest/index.ts';
import { createKeywordIndexes } from '../../src/retrieval/keyword-index/index.ts';
import { createRetrievalMetrics } from '../../src/retrieval/metrics.ts';
import { createEmbedder, createRetrievalApp, openLake, openSearch, retrievalService } from '../../src/retrieval/service.ts';
import type { ScanControl } from '../../src/retrieval/watch/scan.ts';
import { startWatcher } from '../../src/retrieval/watch/watcher.ts';
import { PEOPLE, type Person } from './identities.ts';

// The retrieval app as a deployment builds it, in-process: tests call it through HTTP with app.request().
export type Identity = { user: string; roles: string };
const caller = (p: Person): Identity => ({ user: p.user, roles: p.role });
export const who = {
  admin: caller(PEOPLE.ada),
  engineer: caller(PEOPLE.eve),
  analyst: caller(PEOPLE.ana),
  user: caller(PEOPLE.uma),
  viewer: caller(PEOPLE.vic),
  stranger: caller(PEOPLE.sam),
} satisfies Record<string, Identity>;

export type RetrievalHarness = Awaited<ReturnType<typeof retrievalHarness>>;

/** Settings under every harness of this test file (a file's own module: SVC_RAG_DEFAULT_BACKEND=search, say). */
const fileDefaults: Record<string, string> = {};
/** Runs every harness this file starts from now on with these settings beneath its own. */
export function harnessDefaults(env: Record<string, string>): void {
  Object.assign(fileDefaults, env);
}

export async function retrievalHarness(
  db: Database,
  opts: {
    env?: Record<string, string>;
    embedder?: Embedder;
    /** Starts the replica's watcher; `open` wraps how it opens a source (a test staging a race in the listing). */
    watch?: { owner?: string; open?: ScanControl['open'] };
    callers?: CallerResolver;
    /** Where uploaded files are kept; default a fresh folder under the system's temporary folder. */
    originals?: ObjectStore;
    /** Every answer `json` and `upload` get is checked against the app's OpenAPI document (default); benchmarks turn it off. */
    conformance?: boolean;
    /** Each user's token, sent as X-User-Token (lake collections run on Trino as the caller: tests/support/lake.ts). */
    tokens?: Record<string, string>;
  } = {},
) {
  await retrievalService.migrate(db);
  const config = loadRetrievalConfig({ ...fileDefaults, ...opts.env });
  const logger = createLogger('retrieval', 'silent');
  const ocr = createOcrEngine({ langs: ['eng', 'fra'] });
  const pdfWorkers = config.RAG_PDF_WORKERS > 0 ? createPdfWorkers(config.RAG_PDF_WORKERS) : undefined;
  const policy = await createWasmPolicyEngine();
  // uploaded files go to a folder of this harness's own, removed at close, unless the test gives a store
  const originalsDir = opts.originals ? undefined : await mkdtemp(join(tmpdir(), 'svc-originals-'));
  const metrics = createRetrievalMetrics(createMetrics('retrieval'));
  const deps: RetrievalDeps = {
    config,
    db,
    policy,
    embedder: opts.embedder ?? createEmbedder(config, logger),
    ocr,
    pdfWorkers,
    originals: opts.originals ?? createFolderStore(originalsDir!),
    indexes: createCollectionIndexes(
      config.EMBED_DIM,
      config.RAG_MEMORY_INDEX_MAX_CHUNKS,
      config.RAG_FLOAT_CACHE_BYTES,
      config.RAG_PRUNING_FROM_CHUNKS,
    ),
    keywords: createKeywordIndexes(config.RAG_KEYWORD_INDEX_MAX_CHUNKS),
    // the lake as the service opens it, when the env names a Trino (SVC_TRINO_URL: tests/support/lake.ts lakeEnv)
    lake: await openLake(config, { embedded: false, logger }),
    // OpenSearch likewise, when the env names one (SVC_OPENSEARCH_URL: tests/support/opensearch.ts searchEnv)
    search: await openSearch(config, { embedded: false, logger }),
    metrics,
    limiter: createLimiter({ db, policy, limits: loadLimitSettings({ ...fileDefaults, ...opts.env }), registry: metrics.registry }),
    logger,
    ...(opts.callers ? { callers: opts.callers } : {}),
  };
  const app = createRetrievalApp(deps);
  // the replica's watcher, as the service starts it (polling every SVC_WATCH_POLL_SECONDS), when asked for
  const watcher = opts.watch
    ? startWatcher(deps, config.watch, {
        pollSeconds: config.WATCH_POLL_SECONDS,
        ...(opts.watch.owner ? { owner: opts.watch.owner } : {}),
        ...(opts.watch.open ? { open: opts.watch.open } : {}),
      })
    : undefined;

  const headers = (as?: Identity): Record<string, string> => {
    if (!as) return {};
    const token = opts.tokens?.[as.user];
    return { 'X-User-Id': as.user, 'X-User-Role': as.roles, ...(token ? { 'X-User-Token': token } : {}) };
  };
  const documented = async (method: string, path: string, res: Response) => {
    if (opts.conformance ?? true) await (await import('./openapi-contract.ts')).expectAnswerDocumented(app, method, path, res.clone());
  };

  return {
    app,
    deps,
    db,
    watcher,
    async json(method: string, path: string, as?: Identity, body?: unknown) {
      const res = await app.request(path, {
        method,
        headers: { ...headers(as), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      await documented(method, path, res);
      const text = await res.text();
      return { status: res.status, type: res.headers.get('content-type') ?? '', body: text ? JSON.parse(text) : undefined };
    },
    async upload(slug: string, as: Identity, file: { name: string; bytes: Uint8Array; type?: string }) {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.type ?? 'application/octet-stream' }), file.name);
      const res = await app.request(`/collections/${slug}/documents`, { method: 'POST', headers: headers(as), body: form });
      await documented('POST', `/collections/${slug}/documents`, res);
      return { status: res.status, body: await res.json() };
    },
    async close() {
      await watcher?.stop();
      await ocr.close();
      await pdfWorkers?.close();
      await deps.search?.close();
      if (originalsDir) await rm(originalsDir, { recursive: true, force: true });
    },
  };
}
