import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { experimentIdOf } from '../wire/rules.ts';
import { readRequest } from '../wire/request.ts';
import { searchDatasets } from './datasets.ts';
import { getExperiment, getExperimentByName, loadExperiments } from './load.ts';
import {
  CreateExperiment,
  DeleteExperimentTag,
  ExperimentRef,
  GetByName,
  RenameExperiment,
  SearchDatasets,
  SearchExperiments,
  SetExperimentTag,
} from './messages.ts';
import { searchExperiments } from './search.ts';
import {
  artifactLocationBase,
  createExperiment,
  deleteExperimentTag,
  renameExperiment,
  setExperimentLifecycle,
  setExperimentTag,
} from './store.ts';

export function experimentRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;

  async function search(c: Context<AppEnv>) {
    const req = await readRequest(c, SearchExperiments);
    const found = await searchExperiments(db, {
      maxResults: req.max_results,
      ...(req.page_token ? { pageToken: req.page_token } : {}),
      ...(req.filter ? { filter: req.filter } : {}),
      ...(req.order_by.length ? { orderBy: req.order_by } : {}),
      ...(req.view_type ? { viewType: req.view_type } : {}),
    });
    const experiments = await loadExperiments(db, found.experimentIds.map(Number));
    return c.json({
      ...(experiments.length ? { experiments } : {}),
      ...(found.nextPageToken ? { next_page_token: found.nextPageToken } : {}),
    });
  }

  return new Hono<AppEnv>()
    .post('/experiments/create', async (c) => {
      const req = await readRequest(c, CreateExperiment);
      const input = { ...req, artifactLocation: req.artifact_location, locationBase: artifactLocationBase(deps.artifactRoot) };
      const id = await createExperiment(db, input, deps.now());
      return c.json({ experiment_id: id });
    })
    .get('/experiments/get', async (c) => {
      const req = await readRequest(c, ExperimentRef);
      return c.json({ experiment: await getExperiment(db, req.experiment_id) });
    })
    .get('/experiments/get-by-name', async (c) => {
      const req = await readRequest(c, GetByName);
      return c.json({ experiment: await getExperimentByName(db, req.experiment_name) });
    })
    .post('/experiments/search', search)
    .get('/experiments/search', search)
    .post('/experiments/update', async (c) => {
      const req = await readRequest(c, RenameExperiment);
      await renameExperiment(db, req.experiment_id, req.new_name, deps.now());
      return c.json({});
    })
    .post('/experiments/delete', async (c) => {
      await setExperimentLifecycle(db, (await readRequest(c, ExperimentRef)).experiment_id, 'deleted', deps.now());
      return c.json({});
    })
    .post('/experiments/restore', async (c) => {
      await setExperimentLifecycle(db, (await readRequest(c, ExperimentRef)).experiment_id, 'active', deps.now());
      return c.json({});
    })
    .post('/experiments/set-experiment-tag', async (c) => {
      const req = await readRequest(c, SetExperimentTag);
      await setExperimentTag(db, req.experimentId, req.tag);
      return c.json({});
    })
    .post('/experiments/delete-experiment-tag', async (c) => {
      const req = await readRequest(c, DeleteExperimentTag);
      await deleteExperimentTag(db, req.experiment_id, req.key);
      return c.json({});
    })
    .post('/experiments/search-datasets', async (c) => {
      const req = await readRequest(c, SearchDatasets);
      const summaries = await searchDatasets(
        db,
        req.experiment_ids.map((id) => experimentIdOf(id)),
      );
      return c.json(summaries.length ? { dataset_summaries: summaries } : {});
    });
}
