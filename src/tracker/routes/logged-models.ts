import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import { listArtifacts } from '../artifacts/files.ts';
import { sendArtifact } from '../artifacts/http.ts';
import { checkArtifactPath, storeKeyOf } from '../artifacts/index.ts';
import type { TrackerDeps } from '../deps.ts';
import { invalidParameter } from '../errors.ts';
import { readRequest } from '../request.ts';
import { searchLoggedModels } from '../search/index.ts';
import {
  createLoggedModel,
  deleteLoggedModel,
  deleteLoggedModelTag,
  finalizeLoggedModel,
  getLoggedModel,
  loadLoggedModels,
  logLoggedModelParams,
  setLoggedModelTags,
} from '../store/logged-models.ts';
import { experimentIdOf, required } from '../store/validate.ts';
import { int64, keyValue, list, loggedModelStatus, statusFromWire, str } from '../wire.ts';

const kv = (items: { key: string; value?: string | undefined }[] | undefined) =>
  (items ?? []).map((t) => ({ key: t.key, value: t.value ?? '' }));

// MLflow 3's logged models. The model id is taken from the path (the client also repeats it in some bodies).
export function loggedModelRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;
  return new Hono<AppEnv>()
    .post('/logged-models', async (c) => {
      const req = await readRequest(
        c,
        z.object({
          experiment_id: str().optional(),
          name: str().optional(),
          model_type: str().optional(),
          source_run_id: str().optional(),
          params: list(keyValue()).optional(),
          tags: list(keyValue()).optional(),
        }),
      );
      const model = await createLoggedModel(
        db,
        {
          experimentId: experimentIdOf(required(req.experiment_id, 'experiment_id')),
          name: req.name || undefined,
          modelType: req.model_type,
          sourceRunId: req.source_run_id,
          params: kv(req.params),
          tags: kv(req.tags),
        },
        deps.now(),
      );
      return c.json({ model });
    })
    .post('/logged-models/search', async (c) => {
      const req = await readRequest(
        c,
        z.object({
          experiment_ids: list(z.union([z.string(), z.number()]).transform(String)).optional(),
          filter: str().optional(),
          datasets: list(z.object({ dataset_name: str(), dataset_digest: str().optional() })).optional(),
          max_results: int64().optional(),
          order_by: list(
            z.object({ field_name: str(), ascending: z.boolean().optional(), dataset_name: str().optional(), dataset_digest: str().optional() }),
          ).optional(),
          page_token: str().optional(),
        }),
      );
      const found = await searchLoggedModels(db, {
        experimentIds: required(req.experiment_ids?.length ? req.experiment_ids : undefined, 'experiment_ids'),
        maxResults: req.max_results || 50,
        ...(req.filter ? { filter: req.filter } : {}),
        ...(req.datasets?.length ? { datasets: req.datasets } : {}),
        ...(req.order_by?.length ? { orderBy: req.order_by } : {}),
        ...(req.page_token ? { pageToken: req.page_token } : {}),
      });
      const models = await loadLoggedModels(db, found.modelIds);
      return c.json({ ...(models.length ? { models } : {}), ...(found.nextPageToken ? { next_page_token: found.nextPageToken } : {}) });
    })
    .get('/logged-models/:model_id', async (c) => {
      const allowDeleted = (c.req.query('allow_deleted') ?? '').toLowerCase() === 'true';
      return c.json({ model: await getLoggedModel(db, c.req.param('model_id'), { allowDeleted }) });
    })
    .patch('/logged-models/:model_id', async (c) => {
      const req = await readRequest(c, z.object({ model_id: str().optional(), status: loggedModelStatus().optional() }));
      const id = c.req.param('model_id');
      const status = statusFromWire(required(req.status, 'status'));
      return c.json({ model: await finalizeLoggedModel(db, id, status, deps.now()) });
    })
    .delete('/logged-models/:model_id', async (c) => {
      await deleteLoggedModel(db, c.req.param('model_id'), deps.now());
      return c.json({});
    })
    .post('/logged-models/:model_id/params', async (c) => {
      const req = await readRequest(c, z.object({ model_id: str().optional(), params: list(keyValue()).optional() }));
      await logLoggedModelParams(db, c.req.param('model_id'), kv(req.params));
      return c.json({});
    })
    .patch('/logged-models/:model_id/tags', async (c) => {
      const req = await readRequest(c, z.object({ model_id: str().optional(), tags: list(keyValue()).optional() }));
      return c.json({ model: await setLoggedModelTags(db, c.req.param('model_id'), kv(req.tags)) });
    })
    // The model's files, for the UI (the client reads them through the artifact proxy).
    .get('/logged-models/:model_id/artifacts/directories', async (c) => {
      const model = await getLoggedModel(db, c.req.param('model_id'));
      const rel = checkArtifactPath(c.req.query('artifact_directory_path') ?? '');
      const root = storeKeyOf(deps, model.info.artifact_uri);
      const files = root === null ? [] : await listArtifacts(deps.artifacts, [root, rel].filter(Boolean).join('/'));
      const shown = files.map((f) => ({ ...f, path: rel ? `${rel}/${f.path}` : f.path }));
      return c.json({ root_uri: model.info.artifact_uri, ...(shown.length ? { files: shown } : {}) });
    })
    .get('/logged-models/:model_id/artifacts/files', async (c) => {
      const model = await getLoggedModel(db, c.req.param('model_id'));
      const rel = checkArtifactPath(c.req.query('artifact_file_path') ?? '');
      const root = storeKeyOf(deps, model.info.artifact_uri);
      if (root === null || !rel) throw invalidParameter(`No file '${rel}' of logged model '${model.info.model_id}' is held by this server.`);
      return sendArtifact(c, deps.artifacts, [root, rel].filter(Boolean).join('/'), rel);
    })
    .delete('/logged-models/:model_id/tags/:tag_key{.+}', async (c) => {
      await deleteLoggedModelTag(db, c.req.param('model_id'), c.req.param('tag_key'));
      return c.json({});
    });
}
