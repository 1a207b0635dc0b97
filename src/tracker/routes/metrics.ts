import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { readRequest } from '../request.ts';
import { metricHistory, metricHistoryBulkInterval } from '../store/metrics.ts';
import { required } from '../store/validate.ts';
import { int64, list, str } from '../wire.ts';

export function metricRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;
  return new Hono<AppEnv>()
    .get('/metrics/get-history', async (c) => {
      const req = await readRequest(
        c,
        z.object({
          run_id: str().optional(),
          run_uuid: str().optional(),
          metric_key: str().optional(),
          max_results: int64().optional(),
          page_token: str().optional(),
        }),
      );
      const history = await metricHistory(db, {
        runId: required(req.run_id || req.run_uuid, 'run_id'),
        key: required(req.metric_key, 'metric_key'),
        maxResults: req.max_results,
        pageToken: req.page_token,
      });
      return c.json(history.metrics.length || history.next_page_token ? history : {});
    })
    .get('/metrics/get-history-bulk-interval', async (c) => {
      const req = await readRequest(
        c,
        z.object({
          run_ids: list(z.string()).optional(),
          metric_key: str().optional(),
          start_step: int64().optional(),
          end_step: int64().optional(),
          max_results: int64().optional(),
        }),
      );
      const result = await metricHistoryBulkInterval(db, {
        runIds: req.run_ids ?? [],
        key: required(req.metric_key, 'metric_key'),
        maxResults: Math.min(req.max_results ?? 320, 2500),
        startStep: req.start_step,
        endStep: req.end_step,
      });
      return c.json(result.metrics.length ? result : {});
    });
}
