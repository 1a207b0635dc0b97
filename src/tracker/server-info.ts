import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { Hono } from 'hono';
import type { AppEnv } from '../platform/http.ts';
import { apiRoutes, documentRoutes } from '../platform/openapi/index.ts';

// MLflow 3 clients ask what the server supports before some calls (the artifact client: multipart). A 404 makes
// them assume an old server and ask again on every call; this answers once, truthfully: a SQL store, artifacts
// through the proxy in single requests, workspaces, no trace archival, no presigned uploads, no AI gateway.
const SERVER_INFO = {
  store_type: 'SqlStore',
  workspaces_enabled: true,
  trace_archival_enabled: false,
  multipart_uploads_enabled: false,
  multipart_downloads_enabled: false,
  presigned_upload_run_id_supported: false,
  presigned_upload_model_id_supported: false,
  features_enabled: { gateway: false },
};

/**
 * The MLflow release whose REST API this server speaks. Clients read it from GET /version before features that
 * depend on the server's version (3.x sends traces only to a server it can identify).
 */
export const MLFLOW_API_VERSION = '3.17.2';

/** MLflow's REST reference of that release: the tracking API itself is MLflow's, documented there. */
export const MLFLOW_REST_DOCS = `https://mlflow.org/docs/${MLFLOW_API_VERSION}/api_reference/rest-api.html`;

const version = createRoute({
  method: 'get',
  path: '/version',
  summary: 'The MLflow release whose REST API this server speaks',
  security: [],
  responses: { 200: { description: 'The release, e.g. 3.17.2', content: { 'text/plain': { schema: z.string() } } } },
});

// The tracker's /docs describes what svc adds beside MLflow's protocol, and points to MLflow's own reference for the
// protocol (its routes keep MLflow's shapes and errors, which are not this platform's problem+json).
const TRACKER_DOCUMENT = {
  title: 'svc tracker',
  version: MLFLOW_API_VERSION,
  description: `An MLflow tracking server. Its tracking, registry, artifact and trace API is MLflow ${MLFLOW_API_VERSION}'s REST API, under /api/2.0/mlflow, /api/3.0/mlflow and /api/2.0/mlflow-artifacts: see [MLflow ${MLFLOW_API_VERSION} REST API](${MLFLOW_REST_DOCS}). Below: what this server answers beside it.`,
};

/** Mounted at the root: GET /version (documented at /openapi.json and /docs), GET /api/3.0/mlflow/server-info and its /ajax-api twin. */
export function serverInfoRoutes(): Hono<AppEnv> {
  const documented: OpenAPIHono<AppEnv> = apiRoutes().openapi(version, (c) => c.text(MLFLOW_API_VERSION, 200));
  return new Hono<AppEnv>()
    .route('/', documented)
    .route('/', documentRoutes(documented, TRACKER_DOCUMENT))
    .get('/api/3.0/mlflow/server-info', (c) => c.json(SERVER_INFO))
    .get('/ajax-api/3.0/mlflow/server-info', (c) => c.json(SERVER_INFO));
}
