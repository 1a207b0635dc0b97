import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../platform/http.ts';
import { sendArtifact } from '../artifacts/http.ts';
import { joinKey } from '../artifacts/paths.ts';
import { requireStoreKey } from '../artifacts/store-keys.ts';
import type { TrackerDeps } from '../deps.ts';
import { readDeleteRequest, readRequest } from '../wire/request.ts';
import {
  getDownloadUri,
  getLatestVersions,
  getModelVersion,
  getRegisteredModel,
  getVersionByAlias,
  loadModelVersions,
  loadRegisteredModels,
} from './load.ts';
import {
  AliasRef,
  CreateModelVersion,
  CreateRegisteredModel,
  DeleteModelVersionTag,
  DeleteRegisteredModelTag,
  GetLatestVersions,
  ModelVersionFile,
  NameRef,
  RenameRegisteredModel,
  SearchRegistry,
  SetAlias,
  SetModelVersionTag,
  SetRegisteredModelTag,
  TransitionStage,
  UpdateModelVersion,
  UpdateRegisteredModel,
  VersionRef,
} from './messages.ts';
import {
  createModelVersion,
  deleteModelVersion,
  deleteModelVersionTag,
  setModelVersionTag,
  transitionStage,
  updateModelVersion,
} from './model-versions.ts';
import {
  createRegisteredModel,
  deleteAlias,
  deleteRegisteredModel,
  deleteRegisteredModelTag,
  renameRegisteredModel,
  setAlias,
  setRegisteredModelTag,
  updateRegisteredModel,
} from './registered-models.ts';
import { searchModelVersions, searchRegisteredModels } from './search.ts';
import { signedInUser } from '../signed-in.ts';

// The protos' default page sizes.
const MODELS_PAGE = 100;
const VERSIONS_PAGE = 200_000;

/** MLflow's model registry endpoints (model_registry.proto), paths relative to the API prefix. */
export function registryRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;
  const model = async (name: string) => ({ registered_model: await getRegisteredModel(db, name) });

  const version = async (ref: { name: string; version: number }) => ({ model_version: await getModelVersion(db, ref) });
  const latest = async (c: Context<AppEnv>) =>
    c.json({ model_versions: await getLatestVersions(db, await readRequest(c, GetLatestVersions)) });
  const done = (c: Context<AppEnv>) => c.json({});

  return new Hono<AppEnv>()
    .post('/registered-models/create', async (c) => {
      return c.json({ registered_model: await createRegisteredModel(deps, await readRequest(c, CreateRegisteredModel)) });
    })
    .get('/registered-models/get', async (c) => c.json(await model((await readRequest(c, NameRef)).name)))
    .post('/registered-models/rename', async (c) => {
      const m = await readRequest(c, RenameRegisteredModel);
      return c.json({ registered_model: await renameRegisteredModel(deps, { name: m.name, newName: m.new_name }) });
    })
    .patch('/registered-models/update', async (c) => {
      return c.json({ registered_model: await updateRegisteredModel(deps, await readRequest(c, UpdateRegisteredModel)) });
    })
    .delete('/registered-models/delete', async (c) => {
      await deleteRegisteredModel(deps, (await readDeleteRequest(c, NameRef)).name);
      return done(c);
    })
    .get('/registered-models/search', async (c) => {
      const m = await readRequest(c, SearchRegistry);
      const page = await searchRegisteredModels(db, {
        filter: m.filter,
        maxResults: m.max_results ?? MODELS_PAGE,
        orderBy: m.order_by,
        pageToken: m.page_token,
      });
      const registered_models = await loadRegisteredModels(db, page.names);
      return c.json({ registered_models, ...(page.nextPageToken ? { next_page_token: page.nextPageToken } : {}) });
    })
    .post('/registered-models/get-latest-versions', latest)
    .get('/registered-models/get-latest-versions', latest)
    .post('/registered-models/set-tag', async (c) => {
      await setRegisteredModelTag(deps, await readRequest(c, SetRegisteredModelTag));
      return done(c);
    })
    .delete('/registered-models/delete-tag', async (c) => {
      await deleteRegisteredModelTag(deps, await readDeleteRequest(c, DeleteRegisteredModelTag));
      return done(c);
    })
    .post('/registered-models/alias', async (c) => {
      await setAlias(deps, await readRequest(c, SetAlias));
      return done(c);
    })
    .delete('/registered-models/alias', async (c) => {
      await deleteAlias(deps, await readDeleteRequest(c, AliasRef));
      return done(c);
    })
    .get('/registered-models/alias', async (c) => c.json({ model_version: await getVersionByAlias(db, await readRequest(c, AliasRef)) }))
    .post('/model-versions/create', async (c) => {
      const m = await readRequest(c, CreateModelVersion);
      const created = await createModelVersion(deps, {
        name: m.name,
        source: m.source,
        runId: m.run_id,
        modelId: m.model_id,
        runLink: m.run_link,
        description: m.description,
        tags: m.tags,
        userId: signedInUser(c),
      });
      return c.json({ model_version: created });
    })
    .get('/model-versions/get', async (c) => c.json(await version(await readRequest(c, VersionRef))))
    .patch('/model-versions/update', async (c) => {
      return c.json({ model_version: await updateModelVersion(deps, await readRequest(c, UpdateModelVersion)) });
    })
    .delete('/model-versions/delete', async (c) => {
      await deleteModelVersion(deps, await readDeleteRequest(c, VersionRef));
      return done(c);
    })
    .post('/model-versions/transition-stage', async (c) => {
      const m = await readRequest(c, TransitionStage);
      return c.json({ model_version: await transitionStage(deps, { ...m, archiveExistingVersions: m.archive_existing_versions }) });
    })
    .get('/model-versions/get-download-uri', async (c) =>
      c.json({ artifact_uri: await getDownloadUri(db, await readRequest(c, VersionRef)) }),
    )
    .get('/model-versions/search', async (c) => {
      const m = await readRequest(c, SearchRegistry);
      const page = await searchModelVersions(db, {
        filter: m.filter,
        maxResults: m.max_results ?? VERSIONS_PAGE,
        orderBy: m.order_by,
        pageToken: m.page_token,
      });
      const model_versions = await loadModelVersions(
        db,
        page.versions.map((v) => ({ name: v.name, version: Number(v.version) })),
      );
      return c.json({ model_versions, ...(page.nextPageToken ? { next_page_token: page.nextPageToken } : {}) });
    })
    .post('/model-versions/set-tag', async (c) => {
      await setModelVersionTag(deps, await readRequest(c, SetModelVersionTag));
      return done(c);
    })
    .delete('/model-versions/delete-tag', async (c) => {
      await deleteModelVersionTag(deps, await readDeleteRequest(c, DeleteModelVersionTag));
      return done(c);
    })
    .route('/', modelVersionFileRoutes(deps));
}

/** GET /model-versions/get-artifact: a registered version's file, for the UI (under the API prefixes and the root). */
export function modelVersionFileRoutes(deps: TrackerDeps): Hono<AppEnv> {
  return new Hono<AppEnv>().get('/model-versions/get-artifact', async (c) => {
    const m = await readRequest(c, ModelVersionFile);
    const uri = await getDownloadUri(deps.db, m);
    return sendArtifact(c, deps.artifacts, joinKey(requireStoreKey(deps, uri), m.path), m.path);
  });
}
