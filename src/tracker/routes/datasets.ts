import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { readRequest } from '../request.ts';
import { searchDatasets } from '../store/datasets.ts';
import { experimentIdOf } from '../store/validate.ts';
import { list } from '../wire.ts';

export function datasetRoutes(deps: TrackerDeps): Hono<AppEnv> {
  return new Hono<AppEnv>().post('/experiments/search-datasets', async (c) => {
    const req = await readRequest(c, z.object({ experiment_ids: list(z.union([z.string(), z.number()]).transform(String)).optional() }));
    const summaries = await searchDatasets(deps.db, (req.experiment_ids ?? []).map((id) => experimentIdOf(id)));
    return c.json(summaries.length ? { dataset_summaries: summaries } : {});
  });
}
