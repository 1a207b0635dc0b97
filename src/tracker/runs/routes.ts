import { Hono } from 'hono';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { jsonText } from '../wire/json.ts';
import { readRequest } from '../wire/request.ts';
import { logBatch } from './data.ts';
import { logInputs, logOutputs } from './inputs.ts';
import { runJsonText } from './load.ts';
import {
  CreateRun,
  DeleteTag,
  LogBatch,
  LogInputs,
  LogMetric,
  LogModel,
  LogOutputs,
  LogParameter,
  MetricHistory,
  MetricHistoryBulk,
  MetricHistoryBulkInterval,
  RunRef,
  SearchRuns,
  SetTag,
  UpdateRun,
} from './messages.ts';
import { metricHistory, metricHistoryBulk, metricHistoryBulkInterval } from './metrics.ts';
import { promptlabRoutes } from './promptlab.ts';
import { type RunsPage, searchRunsJson } from './search-page.ts';
import { signedInUser } from '../signed-in.ts';
import {
  checkUserTag,
  checkUserTagDeletion,
  createRun,
  deleteRunTag,
  ownedBy,
  recordLoggedModel,
  setRunLifecycle,
  updateRun,
} from './store.ts';

export function runRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;
  return new Hono<AppEnv>()
    .route('/', promptlabRoutes(deps))
    .post('/runs/create', async (c) =>
      c.json({ run: await createRun(db, ownedBy(await readRequest(c, CreateRun), signedInUser(c)), deps.now()) }),
    )
    .get('/runs/get', async (c) => jsonText(c, `{"run":${await runJsonText(db, await readRequest(c, RunRef))}}`))
    .post('/runs/update', async (c) => {
      const req = await readRequest(c, UpdateRun);
      const runInfo = await updateRun(db, req.run_id, { status: req.status, endTime: req.end_time, runName: req.run_name });
      return c.json({ run_info: runInfo });
    })
    .post('/runs/delete', async (c) => {
      await setRunLifecycle(db, await readRequest(c, RunRef), 'deleted', deps.now());
      return c.json({});
    })
    .post('/runs/restore', async (c) => {
      await setRunLifecycle(db, await readRequest(c, RunRef), 'active', deps.now());
      return c.json({});
    })
    .post('/runs/log-parameter', async (c) => {
      const req = await readRequest(c, LogParameter);
      await logBatch(db, req.runId, req.batch, req);
      return c.json({});
    })
    .post('/runs/log-metric', async (c) => {
      const req = await readRequest(c, LogMetric);
      await logBatch(db, req.runId, req.batch, req);
      return c.json({});
    })
    .post('/runs/log-batch', async (c) => {
      const req = await readRequest(c, LogBatch);
      checkUserTag(req.batch.tags, signedInUser(c));
      await logBatch(db, req.runId, req.batch, req);
      return c.json({});
    })
    .post('/runs/set-tag', async (c) => {
      const req = await readRequest(c, SetTag);
      checkUserTag(req.batch.tags, signedInUser(c));
      await logBatch(db, req.runId, req.batch, req);
      return c.json({});
    })
    .post('/runs/delete-tag', async (c) => {
      const req = await readRequest(c, DeleteTag);
      checkUserTagDeletion(req.key, signedInUser(c));
      await deleteRunTag(db, req.run_id, req.key);
      return c.json({});
    })
    .post('/runs/search', async (c) => {
      const req = await readRequest(c, SearchRuns);
      const found = await searchRunsJson(db, {
        experimentIds: req.experiment_ids,
        maxResults: req.max_results,
        ...(req.filter ? { filter: req.filter } : {}),
        ...(req.run_view_type ? { runViewType: req.run_view_type } : {}),
        ...(req.order_by.length ? { orderBy: req.order_by } : {}),
        ...(req.page_token ? { pageToken: req.page_token } : {}),
      });
      return c.body(searchAnswer(found), 200, { 'Content-Type': 'application/json' });
    })
    .post('/runs/log-inputs', async (c) => {
      const req = await readRequest(c, LogInputs);
      await logInputs(db, req.runId, req);
      return c.json({});
    })
    .post('/runs/outputs', async (c) => {
      const req = await readRequest(c, LogOutputs);
      await logOutputs(db, req.run_id, req.models);
      return c.json({});
    })
    .post('/runs/log-model', async (c) => {
      const req = await readRequest(c, LogModel);
      await recordLoggedModel(db, req.runId, req.model);
      return c.json({});
    })
    .get('/metrics/get-history', async (c) => {
      const req = await readRequest(c, MetricHistory);
      const history = await metricHistory(db, {
        runId: req.run_id,
        key: req.metric_key,
        maxResults: req.max_results,
        pageToken: req.page_token,
      });
      return c.json(history.metrics.length || history.next_page_token ? history : {});
    })
    .get('/metrics/get-history-bulk', async (c) => {
      const result = await metricHistoryBulk(db, await readRequest(c, MetricHistoryBulk));
      return c.json(result.metrics.length ? result : {});
    })
    .get('/metrics/get-history-bulk-interval', async (c) => {
      const req = await readRequest(c, MetricHistoryBulkInterval);
      const result = await metricHistoryBulkInterval(db, {
        runIds: req.run_ids,
        key: req.metric_key,
        maxResults: req.max_results,
        startStep: req.start_step,
        endStep: req.end_step,
      });
      return c.json(result.metrics.length ? result : {});
    });
}

/**
 * runs/search's answer, written into one buffer from its runs' JSON texts (which the database kept, load.ts). No
 * string of the whole answer is made: at 100 runs it is about 140 KB, a large object V8 maps (page faults), fills by
 * joining, flattens and measures before writing it out (2.4 to 2.2 and 3.4 to 3.0 ms of the server's CPU a search in
 * search-profile.ts at load 11).
 */
function searchAnswer({ runs, nextPageToken }: RunsPage): Uint8Array<ArrayBuffer> {
  const members: string[] = [];
  if (runs.length > 0) {
    members.push('"runs":[');
    for (let i = 0; i < runs.length; i++) members.push(i === 0 ? '' : ',', runs[i]!);
    members.push(']');
  }
  if (nextPageToken) members.push(`${runs.length > 0 ? ',' : ''}"next_page_token":${JSON.stringify(nextPageToken)}`);
  return concatUtf8(['{', ...members, '}']);
}

/** The UTF-8 bytes of `pieces` one after another. */
function concatUtf8(pieces: readonly string[]): Uint8Array<ArrayBuffer> {
  let size = 0;
  for (const piece of pieces) size += Buffer.byteLength(piece);
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const piece of pieces) at += bytes.write(piece, at);
  return bytes;
}
