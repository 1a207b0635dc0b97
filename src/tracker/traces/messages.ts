import { z } from 'zod';
import { invalidParameter } from '../errors.ts';
import {
  bool,
  idList,
  int64,
  keyValue,
  list,
  optionalStr,
  protoEnum,
  requiredStr,
  str,
  strOrEmpty,
  type KeyValue,
} from '../wire/fields.ts';
import { checkKey, experimentIdOf } from '../wire/rules.ts';

// The trace endpoints' request messages: MLflow 3's TraceInfo (v3: a location, an RFC 3339 request time, a
// protobuf Duration, a state, metadata and tags as maps) and the deprecated v2 messages older clients send.

export type TraceState = 'STATE_UNSPECIFIED' | 'OK' | 'ERROR' | 'IN_PROGRESS';
const STATES = { 0: 'STATE_UNSPECIFIED', 1: 'OK', 2: 'ERROR', 3: 'IN_PROGRESS' } as const;
const V2_STATUSES = { 0: 'TRACE_STATUS_UNSPECIFIED', 1: 'OK', 2: 'ERROR', 3: 'IN_PROGRESS' } as const;
type V2Status = (typeof V2_STATUSES)[keyof typeof V2_STATUSES];
export const stateOfV2 = (s: V2Status): TraceState => (s === 'TRACE_STATUS_UNSPECIFIED' ? 'STATE_UNSPECIFIED' : s);

/** A trace as the store writes it. */
export type TraceWrite = {
  traceId: string;
  experimentId: number;
  clientRequestId: string | undefined;
  requestTime: number;
  executionDuration: number | undefined;
  state: TraceState;
  requestPreview: string | undefined;
  responsePreview: string | undefined;
  metadata: KeyValue[];
  tags: KeyValue[];
};

/** protobuf's Timestamp in JSON (RFC 3339), as epoch milliseconds. */
const timestamp = () =>
  str().transform((s, ctx) => {
    const ms = Date.parse(s.replace(/(\.\d{3})\d+/, '$1'));
    if (Number.isNaN(ms)) ctx.addIssue({ code: 'custom', params: { message: `Invalid value "${s}" for a timestamp: expected RFC 3339.` } });
    return ms;
  });

/** protobuf's Duration in JSON ("2s", "2.500s"), as milliseconds. */
const duration = () =>
  str().transform((s, ctx) => {
    const m = /^(-?\d+(?:\.\d+)?)s$/.exec(s.trim());
    if (!m) ctx.addIssue({ code: 'custom', params: { message: `Invalid value "${s}" for a duration: expected seconds such as "2.5s".` } });
    return m ? Math.round(Number(m[1]) * 1000) : 0;
  });

/** A proto map<string, string> in JSON: an object of strings. */
const stringMap = () =>
  z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String))
    .optional()
    .transform((m) => Object.entries(m ?? {}).map(([key, value]) => ({ key, value })));

const tagKeys = (tags: KeyValue[]) => {
  tags.forEach((t, i) => {
    checkKey(t.key, `tags[${i}].key`);
  });
  return tags;
};

const location = z.object({
  type: str().optional(),
  mlflow_experiment: z.object({ experiment_id: requiredStr() }).optional(),
});
const experimentOf = (loc: z.output<typeof location> | undefined): number => {
  if (!loc?.mlflow_experiment)
    throw invalidParameter('A trace location must name an MLflow experiment (trace_location.mlflow_experiment.experiment_id).');
  return experimentIdOf(loc.mlflow_experiment.experiment_id);
};

const traceInfo = z.object({
  trace_id: requiredStr(),
  client_request_id: optionalStr(),
  trace_location: location.optional(),
  request_preview: optionalStr(),
  response_preview: optionalStr(),
  request_time: timestamp(),
  execution_duration: duration().optional(),
  state: protoEnum<TraceState[]>(STATES).optional(),
  trace_metadata: stringMap(),
  tags: stringMap(),
});

/** StartTraceV3: the whole TraceInfo, sent when a trace ends. */
export const StartTraceV3 = z.object({ trace: z.object({ trace_info: traceInfo }) }).transform(
  ({ trace: { trace_info: t } }): TraceWrite => ({
    traceId: t.trace_id,
    experimentId: experimentOf(t.trace_location),
    clientRequestId: t.client_request_id,
    requestTime: t.request_time,
    executionDuration: t.execution_duration,
    state: t.state ?? 'STATE_UNSPECIFIED',
    requestPreview: t.request_preview,
    responsePreview: t.response_preview,
    metadata: t.trace_metadata,
    tags: tagKeys(t.tags),
  }),
);

/** StartTrace (v2): a trace begins, in progress. */
export const StartTraceV2 = z.object({
  experiment_id: requiredStr().transform((id) => experimentIdOf(id)),
  timestamp_ms: int64(),
  request_metadata: list(keyValue()),
  tags: list(keyValue()).transform(tagKeys),
});

/** EndTrace (v2): the end time, the status, and metadata and tags merged into what the start wrote. */
export const EndTraceV2 = z.object({
  timestamp_ms: int64(),
  status: protoEnum<V2Status[]>(V2_STATUSES).transform(stateOfV2),
  request_metadata: list(keyValue()),
  tags: list(keyValue()).transform(tagKeys),
});

export const SetTraceTag = z.object({ key: requiredStr().transform((k) => checkKey(k, 'key')), value: strOrEmpty() });
export const DeleteTraceTag = z.object({ key: requiredStr() });

const searchShape = {
  filter: optionalStr(),
  max_results: int64()
    .optional()
    .transform((n) => n ?? 100),
  order_by: list(z.string()),
  page_token: optionalStr(),
};

/** SearchTracesV3: locations are experiments. */
export const SearchTracesV3 = z
  .object({ locations: list(location), ...searchShape })
  .transform((m) => ({ ...m, experimentIds: m.locations.map(experimentOf) }));

/** SearchTraces (v2): experiment ids. */
export const SearchTracesV2 = z
  .object({ experiment_ids: idList(), ...searchShape })
  .transform((m) => ({ ...m, experimentIds: m.experiment_ids.map((id) => experimentIdOf(id)) }));

/** DeleteTraces: by ids, or those of an experiment older than a time (at most max_traces of them). */
export const DeleteTraces = z
  .object({
    experiment_id: requiredStr().transform((id) => experimentIdOf(id)),
    max_timestamp_millis: int64().optional(),
    max_traces: int64().optional(),
    request_ids: list(z.string()),
  })
  .transform((m) => {
    if (m.request_ids.length > 0 && m.max_timestamp_millis !== undefined) {
      throw invalidParameter('`request_ids` and `max_timestamp_millis` cannot both be specified.');
    }
    if (m.request_ids.length === 0 && m.max_timestamp_millis === undefined) {
      throw invalidParameter('Either `max_timestamp_millis` or `request_ids` must be specified.');
    }
    return {
      experimentId: m.experiment_id,
      maxTimestamp: m.max_timestamp_millis,
      maxTraces: m.max_traces,
      traceIds: m.request_ids,
    };
  });

/** GetTrace (v3): a trace with its spans. */
export const GetTrace = z.object({ trace_id: requiredStr(), allow_partial: bool().optional() });

/** BatchGetTraces (v3). */
export const BatchGetTraces = z.object({ trace_ids: list(z.string()) });

/** The UI's trace data download: the trace by its v2 name, and optionally an attachment's path. */
export const GetTraceArtifact = z.object({ request_id: requiredStr(), path: optionalStr() });

/** LinkTracesToRun. */
export const LinkTracesToRun = z.object({ trace_ids: list(z.string()), run_id: requiredStr() });
