import { Hono } from 'hono';
import type { AppEnv } from '../platform/http.ts';

// MLflow 3 clients ask what the server supports before some calls (the artifact client: multipart). A 404 makes
// them assume an old server and ask again on every call; this answers once, truthfully: a SQL store, artifacts
// through the proxy in single requests, no workspaces, no trace archival, no presigned uploads, no AI gateway.
const SERVER_INFO = {
  store_type: 'SqlStore',
  workspaces_enabled: false,
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

/** Mounted at the root: GET /version, GET /api/3.0/mlflow/server-info and its /ajax-api twin. */
export function serverInfoRoutes(): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .get('/version', (c) => c.text(MLFLOW_API_VERSION))
    .get('/api/3.0/mlflow/server-info', (c) => c.json(SERVER_INFO))
    .get('/ajax-api/3.0/mlflow/server-info', (c) => c.json(SERVER_INFO));
}
