import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { readRequest } from '../request.ts';
import { searchModelVersions } from '../search/index.ts';
import { boolField, intField, optionalString, readDeleteRequest, required, stringList, tagsField, versionField } from './fields.ts';
import { loadModelVersions } from './load.ts';
import {
  createModelVersion,
  deleteModelVersion,
  deleteModelVersionTag,
  getDownloadUri,
  getModelVersion,
  setModelVersionTag,
  transitionStage,
  updateModelVersion,
} from './model-versions.ts';

const name = required('name');
const ref = z.object({ name, version: versionField });
const createMessage = z.object({
  name,
  source: required('source'),
  run_id: optionalString,
  run_link: optionalString,
  description: optionalString,
  tags: tagsField,
  model_id: optionalString,
});
const updateMessage = ref.extend({ description: optionalString });
const transitionMessage = ref.extend({ stage: required('stage'), archive_existing_versions: boolField });
const searchMessage = z.object({ filter: optionalString, max_results: intField, order_by: stringList, page_token: optionalString });
const setTagMessage = ref.extend({ key: required('key'), value: z.string().default('') });
const deleteTagMessage = ref.extend({ key: required('key') });

// The proto's default page size.
const DEFAULT_MAX_RESULTS = 200_000;

/** MLflow's ModelVersion endpoints (model_registry.proto), paths relative to the API prefix. */
export function modelVersionRoutes(deps: TrackerDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .post('/model-versions/create', async (c) => {
      const m = await readRequest(c, createMessage);
      const model_version = await createModelVersion(deps, {
        name: m.name,
        source: m.source,
        runId: m.run_id,
        modelId: m.model_id,
        runLink: m.run_link,
        description: m.description,
        tags: m.tags,
      });
      return c.json({ model_version });
    })
    .get('/model-versions/get', async (c) => c.json({ model_version: await getModelVersion(deps, await readRequest(c, ref)) }))
    .patch('/model-versions/update', async (c) => c.json({ model_version: await updateModelVersion(deps, await readRequest(c, updateMessage)) }))
    .delete('/model-versions/delete', async (c) => {
      await deleteModelVersion(deps, await readDeleteRequest(c, ref));
      return c.json({});
    })
    .post('/model-versions/transition-stage', async (c) => {
      const m = await readRequest(c, transitionMessage);
      const model_version = await transitionStage(deps, { ...m, archiveExistingVersions: m.archive_existing_versions });
      return c.json({ model_version });
    })
    .get('/model-versions/get-download-uri', async (c) => c.json({ artifact_uri: await getDownloadUri(deps, await readRequest(c, ref)) }))
    .get('/model-versions/search', async (c) => {
      const m = await readRequest(c, searchMessage);
      const page = await searchModelVersions(deps.db, { filter: m.filter, maxResults: m.max_results ?? DEFAULT_MAX_RESULTS, orderBy: m.order_by, pageToken: m.page_token });
      const model_versions = await loadModelVersions(deps.db, page.versions.map((v) => ({ name: v.name, version: Number(v.version) })));
      return c.json({ model_versions, ...(page.nextPageToken ? { next_page_token: page.nextPageToken } : {}) });
    })
    .post('/model-versions/set-tag', async (c) => {
      await setModelVersionTag(deps, await readRequest(c, setTagMessage));
      return c.json({});
    })
    .delete('/model-versions/delete-tag', async (c) => {
      await deleteModelVersionTag(deps, await readDeleteRequest(c, deleteTagMessage));
      return c.json({});
    });
}
