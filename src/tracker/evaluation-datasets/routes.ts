import { Hono } from 'hono';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { readDeleteRequest, readRequest } from '../wire/request.ts';
import { getEvaluationDataset, getRecords, loadEvaluationDatasets } from './load.ts';
import {
  CreateEvaluationDataset,
  DatasetExperiments,
  DeleteRecords,
  GetRecords,
  SearchEvaluationDatasets,
  SetEvaluationDatasetTags,
  UpsertRecords,
} from './messages.ts';
import { searchEvaluationDatasets } from './search.ts';
import {
  createEvaluationDataset,
  deleteEvaluationDataset,
  deleteEvaluationDatasetTag,
  deleteRecords,
  setDatasetExperiments,
  setEvaluationDatasetTags,
  upsertRecords,
} from './store.ts';

/** MLflow 3's evaluation datasets, under the 3.0 prefixes: /datasets/... */
export function evaluationDatasetRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;
  const dataset = async (id: string) => ({ dataset: await getEvaluationDataset(db, id) });
  return new Hono<AppEnv>()
    .post('/datasets/create', async (c) => {
      const m = await readRequest(c, CreateEvaluationDataset);
      return c.json(
        await dataset(await createEvaluationDataset(db, { name: m.name, experimentIds: m.experiment_ids, tags: m.tags }, deps.now())),
      );
    })
    .post('/datasets/search', async (c) => {
      const m = await readRequest(c, SearchEvaluationDatasets);
      const found = await searchEvaluationDatasets(db, {
        experimentIds: m.experiment_ids,
        filter: m.filter_string,
        maxResults: m.max_results,
        orderBy: m.order_by,
        pageToken: m.page_token,
      });
      const datasets = await loadEvaluationDatasets(db, found.ids);
      return c.json({ ...(datasets.length ? { datasets } : {}), ...(found.nextPageToken ? { next_page_token: found.nextPageToken } : {}) });
    })
    .get('/datasets/:dataset_id', async (c) => c.json(await dataset(c.req.param('dataset_id'))))
    .delete('/datasets/:dataset_id', async (c) => {
      await deleteEvaluationDataset(db, c.req.param('dataset_id'));
      return c.json({});
    })
    .patch('/datasets/:dataset_id/tags', async (c) => {
      await setEvaluationDatasetTags(db, c.req.param('dataset_id'), (await readRequest(c, SetEvaluationDatasetTags)).tags, deps.now());
      return c.json({});
    })
    .delete('/datasets/:dataset_id/tags/:key{.+}', async (c) => {
      await deleteEvaluationDatasetTag(db, c.req.param('dataset_id'), c.req.param('key'), deps.now());
      return c.json({});
    })
    .get('/datasets/:dataset_id/experiment-ids', async (c) => {
      const { experiment_ids } = await getEvaluationDataset(db, c.req.param('dataset_id'));
      return c.json(experiment_ids.length ? { experiment_ids } : {});
    })
    .post('/datasets/:dataset_id/add-experiments', async (c) => {
      const id = c.req.param('dataset_id');
      await setDatasetExperiments(db, id, (await readRequest(c, DatasetExperiments)).experiment_ids, true, deps.now());
      return c.json(await dataset(id));
    })
    .post('/datasets/:dataset_id/remove-experiments', async (c) => {
      const id = c.req.param('dataset_id');
      await setDatasetExperiments(db, id, (await readRequest(c, DatasetExperiments)).experiment_ids, false, deps.now());
      return c.json(await dataset(id));
    })
    .post('/datasets/:dataset_id/records', async (c) => {
      const counts = await upsertRecords(db, c.req.param('dataset_id'), (await readRequest(c, UpsertRecords)).records, deps.now());
      return c.json({ inserted_count: counts.inserted, updated_count: counts.updated });
    })
    .get('/datasets/:dataset_id/records', async (c) => {
      const m = await readRequest(c, GetRecords);
      return c.json(await getRecords(db, c.req.param('dataset_id'), { maxResults: m.max_results, pageToken: m.page_token }));
    })
    .delete('/datasets/:dataset_id/records', async (c) => {
      const m = await readDeleteRequest(c, DeleteRecords);
      return c.json({ deleted_count: await deleteRecords(db, c.req.param('dataset_id'), m.dataset_record_ids, deps.now()) });
    });
}
