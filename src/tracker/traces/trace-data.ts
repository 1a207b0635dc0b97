import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from '../../platform/db/index.ts';
import { doesNotExist } from '../errors.ts';
import { getTrace, loadTraces, traceInfoV3, type TraceInfo } from './load.ts';
import { loadSpans, otelSpanJson, type SpanRow } from './spans-load.ts';
import { SPANS_LOCATION_TAG, TRACKING_STORE } from './spans-store.ts';

// A trace with its spans (MLflow's GetTrace and BatchGetTraces), for traces whose spans the tracking store holds.

const SIZE_STATS = 'mlflow.trace.sizeStats';

export const spansInStore = (t: TraceInfo) => t.tags.some((tag) => tag.key === SPANS_LOCATION_TAG && tag.value === TRACKING_STORE);

/** How many spans the client said the trace has (its size stats), when it said. */
function expectedSpans(t: TraceInfo): number | undefined {
  const stats = t.metadata.find((m) => m.key === SIZE_STATS)?.value;
  if (!stats) return undefined;
  try {
    const n = JSON.parse(stats).num_spans;
    return typeof n === 'number' ? n : undefined;
  } catch {
    return undefined;
  }
}

const traceJson = (t: TraceInfo, spans: SpanRow[]) => ({ trace_info: traceInfoV3(t), spans: spans.map(otelSpanJson) });

/** The trace and its spans; or, when the trace holds them elsewhere, `undefined` with its info. */
export async function readTraceData(db: Sql, traceId: string): Promise<{ info: TraceInfo; spans: SpanRow[] | undefined }> {
  const info = await getTrace(db, traceId);
  if (!spansInStore(info)) return { info, spans: undefined };
  return { info, spans: (await loadSpans(db, [traceId])).get(traceId) ?? [] };
}

/**
 * GetTrace. Without allow_partial a trace whose spans have not all arrived (fewer than its size stats count) is
 * read again twice, a second and then two seconds later, as MLflow's server does, and then answered as not found.
 */
export async function getTraceWithSpans(db: Sql, traceId: string, allowPartial: boolean) {
  for (let attempt = 0; ; attempt++) {
    const { info, spans } = await readTraceData(db, traceId);
    if (spans === undefined)
      throw doesNotExist(`Trace with ID ${traceId} has no spans in the tracking store: read its trace data artifact.`);
    const expected = expectedSpans(info);
    if (allowPartial || expected === undefined || spans.length >= expected) return traceJson(info, spans);
    if (attempt === 2) throw doesNotExist(`Trace with ID ${traceId} is not fully exported yet, please try again later.`);
    await sleep(1000 * 2 ** attempt);
  }
}

/** BatchGetTraces: the traces found whose spans the store holds, in the order asked. */
export async function batchGetTraces(db: Sql, traceIds: string[]) {
  const infos = (await loadTraces(db, traceIds)).filter(spansInStore);
  const spans = await loadSpans(
    db,
    infos.map((t) => t.trace_id),
  );
  return infos.map((t) => traceJson(t, spans.get(t.trace_id) ?? []));
}
