import { Hono } from 'hono';
import { z } from 'zod';
import type { Sql } from '../../platform/db/index.ts';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { doesNotExist, invalidParameter } from '../errors.ts';
import { getDownloadUri } from '../registry/model-versions.ts';
import { readRequest } from '../request.ts';
import { listArtifacts } from './files.ts';
import { sendArtifact } from './http.ts';
import { checkArtifactPath, joinKey, keyOfProxiedUri } from './paths.ts';

const listMessage = z.object({ run_id: z.string().optional(), run_uuid: z.string().optional(), path: z.string().optional(), page_token: z.string().optional() });
const getMessage = z.object({ run_id: z.string().optional(), run_uuid: z.string().optional(), path: z.string({ error: "Missing value for required parameter 'path'." }) });
const versionFileMessage = z.object({
  name: z.string({ error: "Missing value for required parameter 'name'." }),
  version: z.string({ error: "Missing value for required parameter 'version'." }),
  path: z.string({ error: "Missing value for required parameter 'path'." }),
});

/**
 * Run artifacts by run id, for the client's list_artifacts and the UI's artifact browser, paths relative to the
 * API prefix: GET /artifacts/list (MLflow's ListArtifacts), GET /get-artifact (a run's file) and GET
 * /model-versions/get-artifact (a registered version's file).
 */
export function runArtifactRoutes(deps: TrackerDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .get('/artifacts/list', async (c) => {
      const m = await readRequest(c, listMessage);
      const run = await runArtifactRoot(deps.db, m.run_id || m.run_uuid);
      const rel = checkArtifactPath(m.path ?? '');
      const root = storeKeyOf(deps, run.artifactUri);
      // A run whose artifacts live outside this server's store (set by hand to another location) lists as empty.
      const files = root === null ? [] : await listArtifacts(deps.artifacts, joinKey(root, rel));
      return c.json({
        root_uri: run.artifactUri,
        ...(files.length ? { files: files.map((f) => ({ ...f, path: rel ? `${rel}/${f.path}` : f.path })) } : {}),
      });
    })
    .get('/get-artifact', async (c) => {
      const m = await readRequest(c, getMessage);
      const run = await runArtifactRoot(deps.db, m.run_id || m.run_uuid);
      const rel = checkArtifactPath(m.path);
      return sendArtifact(c, deps.artifacts, joinKey(requireStoreKey(deps, run.artifactUri), rel), rel);
    })
    .get('/model-versions/get-artifact', async (c) => {
      const m = await readRequest(c, versionFileMessage);
      const rel = checkArtifactPath(m.path);
      const uri = await getDownloadUri(deps, { name: m.name, version: m.version });
      return sendArtifact(c, deps.artifacts, joinKey(requireStoreKey(deps, uri), rel), rel);
    });
}

async function runArtifactRoot(db: Sql, runId: string | undefined): Promise<{ artifactUri: string }> {
  if (!runId) throw invalidParameter("Missing value for required parameter 'run_id'.");
  const rows = await db.query<{ artifact_uri: string }>(`SELECT artifact_uri FROM tracker_runs WHERE run_id = $1`, [runId]);
  if (!rows[0]) throw doesNotExist(`Run with id=${runId} not found`);
  return { artifactUri: rows[0].artifact_uri };
}

/**
 * The store key of an artifact URI this server holds: `mlflow-artifacts:/<path>` (the proxy), or a location
 * under the configured root written out in full (s3://bucket/prefix/<path>, file:///root/<path>); null otherwise.
 */
export function storeKeyOf(deps: Pick<TrackerDeps, 'artifactRoot'>, uri: string): string | null {
  const proxied = keyOfProxiedUri(uri);
  if (proxied !== null) return proxied;
  const root = deps.artifactRoot.replace(/\/+$/, '');
  for (const base of [root, root.startsWith('/') ? `file://${root}` : null]) {
    if (base && uri.startsWith(`${base}/`)) return checkArtifactPath(uri.slice(base.length + 1));
    if (base && uri === base) return '';
  }
  return null;
}

function requireStoreKey(deps: Pick<TrackerDeps, 'artifactRoot'>, uri: string): string {
  const key = storeKeyOf(deps, uri);
  if (key === null) throw invalidParameter(`Artifacts at '${uri}' are not held by this server; read them from that location directly.`);
  return key;
}
