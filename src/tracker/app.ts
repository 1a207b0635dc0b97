import { Hono } from 'hono';
import { createApp, type AppEnv } from '../platform/http.ts';
import type { TrackerDeps } from './deps.ts';
import { artifactRoutes, runArtifactRoutes, runFileRoutes } from './artifacts/index.ts';
import { fromDatabaseError } from './db-errors.ts';
import { gatewayProxyRoutes } from './gateway-proxy.ts';
import { TrackerError, trackerErrorResponse } from './errors.ts';
import { evaluationDatasetRoutes } from './evaluation-datasets/routes.ts';
import { experimentRoutes } from './experiments/routes.ts';
import { loggedModelRoutes } from './logged-models/routes.ts';
import { graphqlRoutes } from './graphql/routes.ts';
import { modelVersionFileRoutes, registryRoutes } from './registry/routes.ts';
import { runRoutes } from './runs/routes.ts';
import { schemaGateMiddleware } from './schema-gate.ts';
import { serverInfoRoutes } from './server-info.ts';
import { signIn } from './signed-in.ts';
import { OTLP_TRACES_PATH, otlpRoutes } from './traces/otlp-routes.ts';
import { traceRoutesV2, traceRoutesV3 } from './traces/routes.ts';
import { uiRoutes } from './ui/index.ts';
import { workspaceMiddleware, workspaceRoutes } from './workspaces/routes.ts';

/** The MLflow REST prefixes: the client's, the UI's, and the neutral alias. */
export const API_PREFIXES = ['/api/2.0/mlflow', '/ajax-api/2.0/mlflow', '/api/2.0/tracker'] as const;
export const ARTIFACTS_PREFIX = '/api/2.0/mlflow-artifacts';
/** MLflow 3's prefixes: the endpoints that exist only in its 3.0 API (traces, evaluation datasets, server-info). */
export const V3_PREFIXES = ['/api/3.0/mlflow', '/ajax-api/3.0/mlflow'] as const;

/** The tracking API (everything under one prefix), as mounted at each of API_PREFIXES. */
export function trackerApi(deps: TrackerDeps): Hono<AppEnv> {
  const api = new Hono<AppEnv>();
  api.route('/', experimentRoutes(deps));
  api.route('/', runRoutes(deps));
  api.route('/', loggedModelRoutes(deps));
  api.route('/', runArtifactRoutes(deps));
  api.route('/', registryRoutes(deps));
  api.route('/', traceRoutesV2(deps));
  return api;
}

export function createTrackerApp(deps: TrackerDeps): Hono<AppEnv> {
  const app = createApp({
    service: 'tracker',
    logger: deps.logger,
    metrics: deps.metrics,
    ready: () => deps.db.ping(),
    mapError: (err, c) => trackerErrorResponse(fromDatabaseError(err), c),
    maxBodyBytes: deps.config.maxJsonBytes,
    // artifact uploads stream to the store; the UI's upload-artifact keeps MLflow's own 10 MB bound and message
    streamsBody: (c) => c.req.path.startsWith(`${ARTIFACTS_PREFIX}/`) || c.req.path.endsWith('/upload-artifact'),
    ...(deps.callers ? { callers: deps.callers } : {}),
  });
  // every path but /health, /ready and /metrics: a token sent anywhere is checked
  for (const path of [...API_PREFIXES, ...V3_PREFIXES, ARTIFACTS_PREFIX].map((p) => `${p}/*`)) app.use(path, signIn);
  app.use('/graphql', signIn);
  app.use('/ajax-api/graphql', signIn);
  // every call after sign-in runs in the workspace its header names (default without one), if the caller may use it
  app.use('*', workspaceMiddleware(deps));
  const gate = schemaGateMiddleware(deps.schema);
  const api = trackerApi(deps);
  for (const prefix of API_PREFIXES) {
    app.use(`${prefix}/*`, gate);
    app.route(prefix, api);
  }
  const v3 = new Hono<AppEnv>().route('/', traceRoutesV3(deps)).route('/', evaluationDatasetRoutes(deps)).route('/', workspaceRoutes(deps));
  for (const prefix of V3_PREFIXES) {
    app.use(`${prefix}/*`, gate);
    app.route(prefix, v3);
  }
  app.use(`${ARTIFACTS_PREFIX}/*`, gate);
  app.route(ARTIFACTS_PREFIX, artifactRoutes(deps));
  // OTLP span export, at the path OpenTelemetry's exporters append to an endpoint
  app.use(OTLP_TRACES_PATH, signIn, gate);
  app.route('/', otlpRoutes(deps));
  app.route('/', serverInfoRoutes());
  app.route('/', gatewayProxyRoutes());
  // MLflow's UI reads files at the root as well as under the prefixes.
  app.route('/', runFileRoutes(deps));
  app.route('/', modelVersionFileRoutes(deps));
  app.route('/', graphqlRoutes(deps));
  app.route('/', uiRoutes(deps));
  // An unknown path answers in MLflow's words (a 404 the client does not retry), not the platform's problem+json.
  app.notFound((c) =>
    trackerErrorResponse(new TrackerError('ENDPOINT_NOT_FOUND', `No API endpoint for ${c.req.method} ${c.req.path}.`), c),
  );
  return app;
}
