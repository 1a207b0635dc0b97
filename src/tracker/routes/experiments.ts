import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { readRequest } from '../request.ts';
import { searchExperiments } from '../search/index.ts';
import {
  createExperiment,
  deleteExperimentTag,
  getExperiment,
  getExperimentByName,
  loadExperiments,
  renameExperiment,
  setExperimentLifecycle,
  setExperimentTag,
} from '../store/experiments.ts';
import { experimentIdOf, required } from '../store/validate.ts';
import { int64, keyValue, list, str, viewType } from '../wire.ts';

const ExperimentId = z.object({ experiment_id: str().optional() });
const SearchExperiments = z.object({
  max_results: int64().optional(),
  page_token: str().optional(),
  filter: str().optional(),
  order_by: list(z.string()).optional(),
  view_type: viewType().optional(),
});

export function experimentRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;
  const idOf = (req: { experiment_id?: string | undefined }) => experimentIdOf(required(req.experiment_id, 'experiment_id'));

  async function search(c: Context<AppEnv>) {
    const req = await readRequest(c, SearchExperiments);
    const found = await searchExperiments(db, {
      maxResults: req.max_results ?? 1000,
      ...(req.page_token ? { pageToken: req.page_token } : {}),
      ...(req.filter ? { filter: req.filter } : {}),
      ...(req.order_by?.length ? { orderBy: req.order_by } : {}),
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
      const req = await readRequest(
        c,
        z.object({ name: str().optional(), artifact_location: str().optional(), tags: list(keyValue()).optional() }),
      );
      const name = required(req.name, 'name');
      const id = await createExperiment(db, { name, artifactLocation: req.artifact_location, tags: (req.tags ?? []).map((t) => ({ key: t.key, value: t.value ?? '' })) }, deps.now());
      return c.json({ experiment_id: id });
    })
    .get('/experiments/get', async (c) => {
      const req = await readRequest(c, ExperimentId);
      return c.json({ experiment: await getExperiment(db, idOf(req)) });
    })
    .get('/experiments/get-by-name', async (c) => {
      const req = await readRequest(c, z.object({ experiment_name: str().optional() }));
      return c.json({ experiment: await getExperimentByName(db, required(req.experiment_name, 'experiment_name')) });
    })
    .post('/experiments/search', search)
    .get('/experiments/search', search)
    .post('/experiments/update', async (c) => {
      const req = await readRequest(c, ExperimentId.extend({ new_name: str().optional() }));
      await renameExperiment(db, idOf(req), required(req.new_name, 'new_name'), deps.now());
      return c.json({});
    })
    .post('/experiments/delete', async (c) => {
      await setExperimentLifecycle(db, idOf(await readRequest(c, ExperimentId)), 'deleted', deps.now());
      return c.json({});
    })
    .post('/experiments/restore', async (c) => {
      await setExperimentLifecycle(db, idOf(await readRequest(c, ExperimentId)), 'active', deps.now());
      return c.json({});
    })
    .post('/experiments/set-experiment-tag', async (c) => {
      const req = await readRequest(c, ExperimentId.extend({ key: str().optional(), value: str().optional() }));
      await setExperimentTag(db, idOf(req), { key: required(req.key, 'key'), value: req.value ?? '' });
      return c.json({});
    })
    .post('/experiments/delete-experiment-tag', async (c) => {
      const req = await readRequest(c, ExperimentId.extend({ key: str().optional() }));
      await deleteExperimentTag(db, idOf(req), required(req.key, 'key'));
      return c.json({});
    });
}
