import { Hono } from 'hono';
import type { Sql } from '../../platform/db/index.ts';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { doesNotExist } from '../errors.ts';
import { optionalStr, requiredStr, runMessage } from '../wire/fields.ts';
import { readRequest } from '../wire/request.ts';
import { listArtifacts } from './files.ts';
import { sendArtifact } from './http.ts';
import { artifactPathField, checkArtifactPath, joinKey } from './paths.ts';
import { requireStoreKey, storeKeyOf } from './store-keys.ts';

const ListArtifacts = runMessage({ path: artifactPathField(), page_token: optionalStr() });
const GetArtifact = runMessage({ path: requiredStr().transform((p) => checkArtifactPath(p)) });

/**
 * Run artifacts by run id, for the client's list_artifacts and the UI's artifact browser, paths relative to the
 * API prefix: GET /artifacts/list (MLflow's ListArtifacts) and GET /get-artifact (a run's file).
 */
export function runArtifactRoutes(deps: TrackerDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .get('/artifacts/list', async (c) => {
      const m = await readRequest(c, ListArtifacts);
      const artifactUri = await runArtifactUri(deps.db, m.run_id);
      const root = storeKeyOf(deps, artifactUri);
      // A run whose artifacts live outside this server's store (set by hand to another location) lists as empty.
      const files = root === null ? [] : await listArtifacts(deps.artifacts, joinKey(root, m.path));
      return c.json({
        root_uri: artifactUri,
        ...(files.length ? { files: files.map((f) => ({ ...f, path: m.path ? `${m.path}/${f.path}` : f.path })) } : {}),
      });
    })
    .get('/get-artifact', async (c) => {
      const m = await readRequest(c, GetArtifact);
      const artifactUri = await runArtifactUri(deps.db, m.run_id);
      return sendArtifact(c, deps.artifacts, joinKey(requireStoreKey(deps, artifactUri), m.path), m.path);
    });
}

async function runArtifactUri(db: Sql, runId: string): Promise<string> {
  const rows = await db.query<{ artifact_uri: string }>(`SELECT artifact_uri FROM tracker_runs WHERE run_id = $1`, [runId]);
  if (!rows[0]) throw doesNotExist(`Run with id=${runId} not found`);
  return rows[0].artifact_uri;
}
