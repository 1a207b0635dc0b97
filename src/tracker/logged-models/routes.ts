import { Hono } from 'hono';
import type { AppEnv } from '../../platform/http.ts';
import { listArtifacts } from '../artifacts/files.ts';
import { sendArtifact } from '../artifacts/http.ts';
import { joinKey } from '../artifacts/paths.ts';
import { storeKeyOf } from '../artifacts/store-keys.ts';
import type { TrackerDeps } from '../deps.ts';
import { invalidParameter } from '../errors.ts';
import { readRequest } from '../wire/request.ts';
import { getLoggedModel, loadLoggedModels } from './load.ts';
import {
  CreateLoggedModel,
  FinalizeLoggedModel,
  GetLoggedModel,
  LogLoggedModelParams,
  ModelDirectory,
  ModelFile,
  SearchLoggedModels,
  SetLoggedModelTags,
} from './messages.ts';
import { searchLoggedModels } from './search.ts';
import {
  createLoggedModel,
  deleteLoggedModel,
  deleteLoggedModelTag,
  finalizeLoggedModel,
  logLoggedModelParams,
  setLoggedModelTags,
} from './store.ts';

// MLflow 3's logged models. The model id is taken from the path.
export function loggedModelRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;
  const answer = async (id: string) => ({ model: (await loadLoggedModels(db, [id]))[0]! });
  return (
    new Hono<AppEnv>()
      .post('/logged-models', async (c) =>
        c.json(await answer(await createLoggedModel(db, await readRequest(c, CreateLoggedModel), deps.now()))),
      )
      .post('/logged-models/search', async (c) => {
        const req = await readRequest(c, SearchLoggedModels);
        const found = await searchLoggedModels(db, {
          experimentIds: req.experiment_ids,
          maxResults: req.max_results,
          ...(req.filter ? { filter: req.filter } : {}),
          ...(req.datasets.length ? { datasets: req.datasets } : {}),
          ...(req.order_by.length ? { orderBy: req.order_by } : {}),
          ...(req.page_token ? { pageToken: req.page_token } : {}),
        });
        const models = await loadLoggedModels(db, found.modelIds);
        return c.json({ ...(models.length ? { models } : {}), ...(found.nextPageToken ? { next_page_token: found.nextPageToken } : {}) });
      })
      .get('/logged-models/:model_id', async (c) => {
        const req = await readRequest(c, GetLoggedModel);
        return c.json({ model: await getLoggedModel(db, c.req.param('model_id'), { allowDeleted: req.allow_deleted === true }) });
      })
      .patch('/logged-models/:model_id', async (c) => {
        const id = c.req.param('model_id');
        await finalizeLoggedModel(db, id, await readRequest(c, FinalizeLoggedModel), deps.now());
        return c.json(await answer(id));
      })
      .delete('/logged-models/:model_id', async (c) => {
        await deleteLoggedModel(db, c.req.param('model_id'), deps.now());
        return c.json({});
      })
      .post('/logged-models/:model_id/params', async (c) => {
        await logLoggedModelParams(db, c.req.param('model_id'), (await readRequest(c, LogLoggedModelParams)).params);
        return c.json({});
      })
      .patch('/logged-models/:model_id/tags', async (c) => {
        const id = c.req.param('model_id');
        await setLoggedModelTags(db, id, (await readRequest(c, SetLoggedModelTags)).tags);
        return c.json(await answer(id));
      })
      // The model's files, for the UI (the client reads them through the artifact proxy).
      .get('/logged-models/:model_id/artifacts/directories', async (c) => {
        const model = await getLoggedModel(db, c.req.param('model_id'));
        const rel = (await readRequest(c, ModelDirectory)).artifact_directory_path;
        const root = storeKeyOf(deps, model.info.artifact_uri);
        const files = root === null ? [] : await listArtifacts(deps.artifacts, joinKey(root, rel));
        const shown = files.map((f) => ({ ...f, path: rel ? `${rel}/${f.path}` : f.path }));
        return c.json({ root_uri: model.info.artifact_uri, ...(shown.length ? { files: shown } : {}) });
      })
      .get('/logged-models/:model_id/artifacts/files', async (c) => {
        const model = await getLoggedModel(db, c.req.param('model_id'));
        const rel = (await readRequest(c, ModelFile)).artifact_file_path;
        const root = storeKeyOf(deps, model.info.artifact_uri);
        if (root === null || !rel)
          throw invalidParameter(`No file '${rel}' of logged model '${model.info.model_id}' is held by this server.`);
        return sendArtifact(c, deps.artifacts, joinKey(root, rel), rel);
      })
      .delete('/logged-models/:model_id/tags/:tag_key{.+}', async (c) => {
        await deleteLoggedModelTag(db, c.req.param('model_id'), c.req.param('tag_key'));
        return c.json({});
      })
  );
}
