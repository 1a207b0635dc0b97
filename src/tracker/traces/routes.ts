import { Hono } from 'hono';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { CreateAssessment, createAssessment, deleteAssessment, getAssessment, UpdateAssessment, updateAssessment } from './assessments.ts';
import { readDeleteRequest, readRequest } from '../wire/request.ts';
import { getTrace, loadTraces, traceInfoV2, traceInfoV3 } from './load.ts';
import {
  BatchGetTraces,
  DeleteTraces,
  GetTrace,
  GetTraceArtifact,
  DeleteTraceTag,
  LinkTracesToRun,
  EndTraceV2,
  SearchTracesV2,
  SearchTracesV3,
  SetTraceTag,
  StartTraceV2,
  StartTraceV3,
} from './messages.ts';
import { searchTraces } from './search.ts';
import { type TraceAccess, traceAccess } from './access.ts';
import { FINALIZED_METADATA } from './spans-store.ts';
import { traceArtifact } from './trace-artifact.ts';
import { batchGetTraces, getTraceWithSpans } from './trace-data.ts';
import { deleteTraces, deleteTraceTag, endTraceV2, linkTracesToRun, setTraceTag, startTraceV2, writeTrace } from './store.ts';

// Traces: MLflow 3's endpoints (/api/3.0/mlflow/traces...) and the deprecated v2 ones (/api/2.0/mlflow/traces...)
// that older clients and the tag calls still use. Paths relative to the prefix they are mounted under.

function shared(deps: TrackerDeps, access: TraceAccess): Hono<AppEnv> {
  const { db } = deps;
  return (
    new Hono<AppEnv>()
      .post('/traces/delete-traces', async (c) => {
        const m = await readRequest(c, DeleteTraces);
        if (m.traceIds.length > 0) await access.require(c, m.traceIds);
        else await access.requireEvery(c, m.experimentId);
        return c.json({ traces_deleted: await deleteTraces(db, m) });
      })
      .post('/traces/link-to-run', async (c) => {
        const m = await readRequest(c, LinkTracesToRun);
        await access.require(c, m.trace_ids);
        await linkTracesToRun(db, m.trace_ids, m.run_id);
        return c.json({});
      })
      .patch('/traces/:trace_id/tags', async (c) => {
        await access.require(c, [c.req.param('trace_id')]);
        await setTraceTag(db, c.req.param('trace_id'), await readRequest(c, SetTraceTag));
        return c.json({});
      })
      .delete('/traces/:trace_id/tags', async (c) => {
        await access.require(c, [c.req.param('trace_id')]);
        await deleteTraceTag(db, c.req.param('trace_id'), (await readDeleteRequest(c, DeleteTraceTag)).key);
        return c.json({});
      })
      // the UI's download of a trace's data (MLflow serves it under the /ajax-api prefixes)
      .get('/get-trace-artifact', async (c) => {
        const m = await readRequest(c, GetTraceArtifact);
        await access.require(c, [m.request_id]);
        return traceArtifact(c, deps, m.request_id, m.path);
      })
  );
}

/** Under the 2.0 prefixes. */
export function traceRoutesV2(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;
  const access = traceAccess(deps);
  const info = async (id: string) => ({ trace_info: traceInfoV2(await getTrace(db, id)) });
  return new Hono<AppEnv>()
    .route('/', shared(deps, access))
    .post('/traces', async (c) => {
      const m = await readRequest(c, StartTraceV2);
      const id = await startTraceV2(db, {
        experimentId: m.experiment_id,
        requestTime: m.timestamp_ms,
        metadata: m.request_metadata,
        tags: m.tags,
      });
      return c.json(await info(id));
    })
    .get('/traces', async (c) => {
      const m = await readRequest(c, SearchTracesV2);
      const scope = await access.searchScope(c, m.experimentIds);
      const found = await searchTraces(db, { ...m, maxResults: m.max_results, orderBy: m.order_by, pageToken: m.page_token, scope });
      const traces = (await loadTraces(db, found.traceIds)).map(traceInfoV2);
      return c.json({ ...(traces.length ? { traces } : {}), ...(found.nextPageToken ? { next_page_token: found.nextPageToken } : {}) });
    })
    .patch('/traces/:request_id', async (c) => {
      const m = await readRequest(c, EndTraceV2);
      const id = c.req.param('request_id');
      await access.require(c, [id]);
      await endTraceV2(db, id, { endTime: m.timestamp_ms, state: m.status, metadata: m.request_metadata, tags: m.tags });
      return c.json(await info(id));
    })
    .get('/traces/:request_id/info', async (c) => {
      await access.require(c, [c.req.param('request_id')]);
      return c.json(await info(c.req.param('request_id')));
    });
}

/** Under the 3.0 prefixes. */
export function traceRoutesV3(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;
  const access = traceAccess(deps);
  const trace = async (id: string) => ({ trace: { trace_info: traceInfoV3(await getTrace(db, id)) } });
  return (
    new Hono<AppEnv>()
      .route('/', shared(deps, access))
      .post('/traces', async (c) => {
        const t = await readRequest(c, StartTraceV3);
        await access.require(c, [t.traceId]); // a trace that exists is rewritten: only by whoever may reach it
        // as MLflow's store marks it: the client's times and previews stand, and later spans no longer widen them
        await writeTrace(db, { ...t, metadata: [...t.metadata, { key: FINALIZED_METADATA, value: 'true' }] });
        return c.json(await trace(t.traceId));
      })
      // before /traces/:trace_id, which would take 'get' for an id
      .get('/traces/get', async (c) => {
        const m = await readRequest(c, GetTrace);
        await access.require(c, [m.trace_id]);
        return c.json({ trace: await getTraceWithSpans(db, m.trace_id, m.allow_partial ?? false) });
      })
      .get('/traces/batchGet', async (c) => {
        const ids = (await readRequest(c, BatchGetTraces)).trace_ids;
        await access.require(c, ids);
        return c.json({ traces: await batchGetTraces(db, ids) });
      })
      .post('/traces/search', async (c) => {
        const m = await readRequest(c, SearchTracesV3);
        const scope = await access.searchScope(c, m.experimentIds);
        const found = await searchTraces(db, { ...m, maxResults: m.max_results, orderBy: m.order_by, pageToken: m.page_token, scope });
        const traces = (await loadTraces(db, found.traceIds)).map(traceInfoV3);
        return c.json({ ...(traces.length ? { traces } : {}), ...(found.nextPageToken ? { next_page_token: found.nextPageToken } : {}) });
      })
      .get('/traces/:trace_id', async (c) => {
        await access.require(c, [c.req.param('trace_id')]);
        return c.json(await trace(c.req.param('trace_id')));
      })
      // an assessment is read and changed with its trace (the pattern takes /assessments itself as well)
      .use('/traces/:trace_id/assessments/*', async (c, next) => {
        await access.require(c, [c.req.param('trace_id')!]);
        await next();
      })
      .post('/traces/:trace_id/assessments', async (c) => {
        const m = await readRequest(c, CreateAssessment);
        return c.json({ assessment: await createAssessment(db, c.req.param('trace_id'), m.assessment) });
      })
      .get('/traces/:trace_id/assessments/:assessment_id', async (c) =>
        c.json({ assessment: await getAssessment(db, c.req.param('trace_id'), c.req.param('assessment_id')) }),
      )
      .patch('/traces/:trace_id/assessments/:assessment_id', async (c) => {
        const m = await readRequest(c, UpdateAssessment);
        return c.json({ assessment: await updateAssessment(db, c.req.param('trace_id'), c.req.param('assessment_id'), m) });
      })
      .delete('/traces/:trace_id/assessments/:assessment_id', async (c) => {
        await deleteAssessment(db, c.req.param('trace_id'), c.req.param('assessment_id'));
        return c.json({});
      })
  );
}
