import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { readRequest } from '../request.ts';
import { searchRuns } from '../search/index.ts';
import { logInputs, logOutputs } from '../store/inputs.ts';
import { deleteRunTag, logBatch, recordLoggedModel, type MetricPoint } from '../store/run-data.ts';
import { createRun, getRun, loadRuns, setRunLifecycle, updateRun } from '../store/runs.ts';
import { experimentIdOf, required } from '../store/validate.ts';
import { double, int64, keyValue, list, runStatus, str, viewType } from '../wire.ts';

// The run id travels as run_id, or run_uuid from older clients.
const RunRef = z.object({ run_id: str().optional(), run_uuid: str().optional() });
const runIdOf = (req: z.infer<typeof RunRef>) => required(req.run_id || req.run_uuid, 'run_id');

const Metric = z.object({
  key: str().optional(),
  value: double().optional(),
  timestamp: int64().optional(),
  step: int64().optional(),
  model_id: str().optional(),
  dataset_name: str().optional(),
  dataset_digest: str().optional(),
});

function metricPoint(m: z.infer<typeof Metric>, path: string): MetricPoint {
  return {
    key: required(m.key, `${path}key`),
    value: required(m.value, `${path}value`),
    timestamp: required(m.timestamp, `${path}timestamp`),
    step: m.step ?? 0,
    ...(m.model_id ? { model_id: m.model_id } : {}),
    ...(m.dataset_name ? { dataset_name: m.dataset_name } : {}),
    ...(m.dataset_digest ? { dataset_digest: m.dataset_digest } : {}),
  };
}

const Dataset = z.object({
  name: str().optional(),
  digest: str().optional(),
  source_type: str().optional(),
  source: str().optional(),
  schema: str().optional(),
  profile: str().optional(),
});

export function runRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;
  return new Hono<AppEnv>()
    .post('/runs/create', async (c) => {
      const req = await readRequest(
        c,
        z.object({
          experiment_id: str().optional(),
          user_id: str().optional(),
          run_name: str().optional(),
          start_time: int64().optional(),
          tags: list(keyValue()).optional(),
        }),
      );
      const run = await createRun(
        db,
        {
          experimentId: experimentIdOf(req.experiment_id || '0'),
          userId: req.user_id ?? '',
          runName: req.run_name,
          startTime: req.start_time,
          tags: (req.tags ?? []).map((t) => ({ key: t.key, value: t.value ?? '' })),
        },
        deps.now(),
      );
      return c.json({ run });
    })
    .get('/runs/get', async (c) => {
      const req = await readRequest(c, RunRef);
      return c.json({ run: await getRun(db, runIdOf(req)) });
    })
    .post('/runs/update', async (c) => {
      const req = await readRequest(c, RunRef.extend({ status: runStatus().optional(), end_time: int64().optional(), run_name: str().optional() }));
      const runInfo = await updateRun(db, runIdOf(req), { status: req.status, endTime: req.end_time, runName: req.run_name });
      return c.json({ run_info: runInfo });
    })
    .post('/runs/delete', async (c) => {
      await setRunLifecycle(db, runIdOf(await readRequest(c, RunRef)), 'deleted', deps.now());
      return c.json({});
    })
    .post('/runs/restore', async (c) => {
      await setRunLifecycle(db, runIdOf(await readRequest(c, RunRef)), 'active', deps.now());
      return c.json({});
    })
    .post('/runs/log-parameter', async (c) => {
      const req = await readRequest(c, RunRef.extend({ key: str().optional(), value: str().optional() }));
      const param = { key: required(req.key, 'key'), value: req.value ?? '' };
      await logBatch(db, runIdOf(req), { metrics: [], params: [param], tags: [] }, { single: true });
      return c.json({});
    })
    .post('/runs/log-metric', async (c) => {
      const req = await readRequest(c, RunRef.merge(Metric));
      await logBatch(db, runIdOf(req), { metrics: [metricPoint(req, '')], params: [], tags: [] }, { single: true });
      return c.json({});
    })
    .post('/runs/log-batch', async (c) => {
      const req = await readRequest(
        c,
        RunRef.extend({ metrics: list(Metric).optional(), params: list(keyValue()).optional(), tags: list(keyValue()).optional() }),
      );
      const batch = {
        metrics: (req.metrics ?? []).map((m, i) => metricPoint(m, `metrics[${i}].`)),
        params: (req.params ?? []).map((p) => ({ key: p.key, value: p.value ?? '' })),
        tags: (req.tags ?? []).map((t) => ({ key: t.key, value: t.value ?? '' })),
      };
      await logBatch(db, runIdOf(req), batch);
      return c.json({});
    })
    .post('/runs/set-tag', async (c) => {
      const req = await readRequest(c, RunRef.extend({ key: str().optional(), value: str().optional() }));
      const tag = { key: required(req.key, 'key'), value: req.value ?? '' };
      await logBatch(db, runIdOf(req), { metrics: [], params: [], tags: [tag] }, { single: true });
      return c.json({});
    })
    .post('/runs/delete-tag', async (c) => {
      const req = await readRequest(c, RunRef.extend({ key: str().optional() }));
      await deleteRunTag(db, runIdOf(req), required(req.key, 'key'));
      return c.json({});
    })
    .post('/runs/search', async (c) => {
      const req = await readRequest(
        c,
        z.object({
          experiment_ids: list(z.union([z.string(), z.number()]).transform(String)).optional(),
          filter: str().optional(),
          run_view_type: viewType().optional(),
          max_results: int64().optional(),
          order_by: list(z.string()).optional(),
          page_token: str().optional(),
        }),
      );
      const found = await searchRuns(db, {
        experimentIds: req.experiment_ids ?? [],
        maxResults: req.max_results ?? 1000,
        ...(req.filter ? { filter: req.filter } : {}),
        ...(req.run_view_type ? { runViewType: req.run_view_type } : {}),
        ...(req.order_by?.length ? { orderBy: req.order_by } : {}),
        ...(req.page_token ? { pageToken: req.page_token } : {}),
      });
      const runs = await loadRuns(db, found.runIds);
      return c.json({ ...(runs.length ? { runs } : {}), ...(found.nextPageToken ? { next_page_token: found.nextPageToken } : {}) });
    })
    .post('/runs/log-inputs', async (c) => {
      const req = await readRequest(
        c,
        RunRef.extend({
          datasets: list(z.object({ tags: list(keyValue()).optional(), dataset: Dataset.optional() })).optional(),
          models: list(z.object({ model_id: str() })).optional(),
        }),
      );
      const datasets = (req.datasets ?? []).map((d, i) => ({
        tags: (d.tags ?? []).map((t) => ({ key: t.key, value: t.value ?? '' })),
        dataset: {
          name: required(d.dataset?.name, `datasets[${i}].dataset.name`),
          digest: required(d.dataset?.digest, `datasets[${i}].dataset.digest`),
          source_type: required(d.dataset?.source_type, `datasets[${i}].dataset.source_type`),
          source: required(d.dataset?.source, `datasets[${i}].dataset.source`),
          ...(d.dataset?.schema ? { schema: d.dataset.schema } : {}),
          ...(d.dataset?.profile ? { profile: d.dataset.profile } : {}),
        },
      }));
      await logInputs(db, runIdOf(req), { datasets, models: req.models ?? [] });
      return c.json({});
    })
    .post('/runs/outputs', async (c) => {
      const req = await readRequest(c, RunRef.extend({ models: list(z.object({ model_id: str(), step: int64().optional() })).optional() }));
      const models = required(req.models, 'models').map((m) => ({ model_id: m.model_id, step: m.step ?? 0 }));
      await logOutputs(db, runIdOf(req), models);
      return c.json({});
    })
    .post('/runs/log-model', async (c) => {
      const req = await readRequest(c, RunRef.extend({ model_json: str().optional() }));
      await recordLoggedModel(db, runIdOf(req), required(req.model_json, 'model_json'));
      return c.json({});
    });
}
