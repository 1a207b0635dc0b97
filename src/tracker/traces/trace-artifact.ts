import type { Context } from 'hono';
import type { AppEnv } from '../../platform/http.ts';
import { sendArtifact, storeKeyOf } from '../artifacts/index.ts';
import type { TrackerDeps } from '../deps.ts';
import { doesNotExist } from '../errors.ts';
import { traceDataJson } from './spans-load.ts';
import { readTraceData } from './trace-data.ts';
import { ARTIFACT_TAG } from './store.ts';

// GET get-trace-artifact?request_id=...: the trace data file (traces.json) the UI reads. As MLflow's server: from
// the tracking store when it holds the spans, else the traces.json the client uploaded under the trace's artifact
// location. Attachments (path=...) are not kept by this server.

const TRACE_DATA_FILE = 'traces.json';

export async function traceArtifact(c: Context<AppEnv>, deps: TrackerDeps, traceId: string, path: string | undefined): Promise<Response> {
  if (path !== undefined) throw doesNotExist(`Trace '${traceId}' has no attachment '${path}': this server keeps no trace attachments.`);
  const { info, spans } = await readTraceData(deps.db, traceId);
  if (spans !== undefined) {
    return c.body(traceDataJson(spans), 200, {
      'Content-Type': 'application/octet-stream',
      'Content-Disposition': `attachment; filename="${TRACE_DATA_FILE}"`,
      'X-Content-Type-Options': 'nosniff',
    });
  }
  const location = info.tags.find((t) => t.key === ARTIFACT_TAG)?.value;
  const key = location === undefined ? null : storeKeyOf(deps, location);
  if (key === null) throw doesNotExist(`Trace '${traceId}' has no trace data this server holds.`);
  return sendArtifact(c, deps.artifacts, `${key}/${TRACE_DATA_FILE}`, TRACE_DATA_FILE);
}
