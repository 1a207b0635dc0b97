import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { TrackerError } from '../errors.ts';
import { readRequest } from '../wire/request.ts';
import { deleteArtifacts, listArtifacts, uploadArtifact } from './files.ts';
import { sendArtifact, wildcardTail } from './http.ts';
import { artifactKeyFromUrl, artifactPathField } from './paths.ts';
import { requireArtifactKeyInWorkspace } from '../workspaces/artifacts.ts';

const listMessage = z.object({ path: artifactPathField() });

// The client checks for exactly this start of the message to fall back to one PUT per file.
const NO_MULTIPART = 'Multipart upload is not supported for the current artifact repository';
const NO_PRESIGNED = 'Presigned download is not supported for the current artifact repository';

/**
 * The artifact proxy (mlflow_artifacts.proto), paths relative to /api/2.0/mlflow-artifacts. Paths are relative to
 * the artifact root; uploads and downloads stream through without being held in memory.
 */
export function artifactRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const store = deps.artifacts;
  // every path is checked against the request's workspace before the store is touched
  const keyOf = async (c: Parameters<typeof wildcardTail>[0]) => {
    const key = artifactKeyFromUrl(wildcardTail(c));
    await requireArtifactKeyInWorkspace(deps.db, key);
    return key;
  };
  return new Hono<AppEnv>()
    .get('/artifacts', async (c) => {
      const m = await readRequest(c, listMessage);
      await requireArtifactKeyInWorkspace(deps.db, m.path);
      const files = await listArtifacts(store, m.path);
      return c.json(files.length ? { files } : {});
    })
    .get('/artifacts/*', async (c) => sendArtifact(c, store, await keyOf(c)))
    .put('/artifacts/*', async (c) => {
      const length = c.req.header('content-length');
      await uploadArtifact(store, await keyOf(c), c.req.raw.body, {
        contentLength: length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined,
        contentType: c.req.header('content-type'),
      });
      return c.json({});
    })
    .delete('/artifacts/*', async (c) => {
      await deleteArtifacts(store, await keyOf(c));
      return c.json({});
    })
    .post('/mpu/:step{create|complete|abort}/*', () => {
      throw new TrackerError(
        'NOT_IMPLEMENTED',
        `${NO_MULTIPART}: upload each file with one PUT to /api/2.0/mlflow-artifacts/artifacts/<path>.`,
      );
    })
    .get('/presigned/*', () => {
      throw new TrackerError('NOT_IMPLEMENTED', `${NO_PRESIGNED}: download through /api/2.0/mlflow-artifacts/artifacts/<path>.`);
    });
}
