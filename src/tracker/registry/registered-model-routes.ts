import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { readRequest } from '../request.ts';
import { searchRegisteredModels } from '../search/index.ts';
import { intField, optionalString, readDeleteRequest, required, stringList, tagsField, versionField } from './fields.ts';
import { loadRegisteredModels } from './load.ts';
import { getVersionByAlias } from './model-versions.ts';
import {
  createRegisteredModel,
  deleteAlias,
  deleteRegisteredModel,
  deleteRegisteredModelTag,
  getLatestVersions,
  getRegisteredModel,
  renameRegisteredModel,
  setAlias,
  setRegisteredModelTag,
  updateRegisteredModel,
} from './registered-models.ts';

const name = required('name');
const createMessage = z.object({ name, tags: tagsField, description: optionalString });
const nameMessage = z.object({ name });
const renameMessage = z.object({ name, new_name: required('new_name') });
const updateMessage = z.object({ name, description: optionalString });
const searchMessage = z.object({ filter: optionalString, max_results: intField, order_by: stringList, page_token: optionalString });
const latestMessage = z.object({ name, stages: stringList });
const setTagMessage = z.object({ name, key: required('key'), value: z.string().default('') });
const deleteTagMessage = z.object({ name, key: required('key') });
const aliasMessage = z.object({ name, alias: required('alias') });
const setAliasMessage = z.object({ name, alias: required('alias'), version: versionField });

// The proto's default page size.
const DEFAULT_MAX_RESULTS = 100;

/** MLflow's RegisteredModel endpoints (model_registry.proto), paths relative to the API prefix. */
export function registeredModelRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const latest = async (c: Context<AppEnv>) => {
    const m = await readRequest(c, latestMessage);
    return c.json({ model_versions: await getLatestVersions(deps, { name: m.name, stages: m.stages }) });
  };
  return new Hono<AppEnv>()
    .post('/registered-models/create', async (c) => {
      const m = await readRequest(c, createMessage);
      return c.json({ registered_model: await createRegisteredModel(deps, m) });
    })
    .get('/registered-models/get', async (c) => {
      const m = await readRequest(c, nameMessage);
      return c.json({ registered_model: await getRegisteredModel(deps, m.name) });
    })
    .post('/registered-models/rename', async (c) => {
      const m = await readRequest(c, renameMessage);
      return c.json({ registered_model: await renameRegisteredModel(deps, { name: m.name, newName: m.new_name }) });
    })
    .patch('/registered-models/update', async (c) => {
      const m = await readRequest(c, updateMessage);
      return c.json({ registered_model: await updateRegisteredModel(deps, m) });
    })
    .delete('/registered-models/delete', async (c) => {
      const m = await readDeleteRequest(c, nameMessage);
      await deleteRegisteredModel(deps, m.name);
      return c.json({});
    })
    .get('/registered-models/search', async (c) => {
      const m = await readRequest(c, searchMessage);
      const page = await searchRegisteredModels(deps.db, { filter: m.filter, maxResults: m.max_results ?? DEFAULT_MAX_RESULTS, orderBy: m.order_by, pageToken: m.page_token });
      const registered_models = await loadRegisteredModels(deps.db, page.names);
      return c.json({ registered_models, ...(page.nextPageToken ? { next_page_token: page.nextPageToken } : {}) });
    })
    .post('/registered-models/get-latest-versions', latest)
    .get('/registered-models/get-latest-versions', latest)
    .post('/registered-models/set-tag', async (c) => {
      await setRegisteredModelTag(deps, await readRequest(c, setTagMessage));
      return c.json({});
    })
    .delete('/registered-models/delete-tag', async (c) => {
      await deleteRegisteredModelTag(deps, await readDeleteRequest(c, deleteTagMessage));
      return c.json({});
    })
    .post('/registered-models/alias', async (c) => {
      await setAlias(deps, await readRequest(c, setAliasMessage));
      return c.json({});
    })
    .delete('/registered-models/alias', async (c) => {
      await deleteAlias(deps, await readDeleteRequest(c, aliasMessage));
      return c.json({});
    })
    .get('/registered-models/alias', async (c) => {
      const m = await readRequest(c, aliasMessage);
      return c.json({ model_version: await getVersionByAlias(deps, m) });
    });
}
