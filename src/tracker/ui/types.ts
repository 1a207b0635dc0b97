// The wire as the web UI reads it, derived from the server's own JSON builders so that a change of shape there is a
// type error in the UI modules (`npm run typecheck` checks them with tsconfig.web.json). Types only: this file is
// never served. Envelopes are written out here; the objects inside them come from the server.
import type { FileInfo } from '../artifacts/files.ts';
import type { ModelVersionJson, RegisteredModelJson } from '../registry/load.ts';
import type { KeyValue } from '../wire/fields.ts';
import type { traceInfoV3 } from '../traces/load.ts';
import type { otelSpanJson } from '../traces/spans-load.ts';
import type { experimentJson, metricJson, runJson } from '../wire/json.ts';

export type { FileInfo, KeyValue };
export type Experiment = ReturnType<typeof experimentJson>;
export type Run = ReturnType<typeof runJson>;
export type Metric = ReturnType<typeof metricJson>;
export type RegisteredModel = RegisteredModelJson;
export type ModelVersion = ModelVersionJson;
export type TraceInfo = ReturnType<typeof traceInfoV3>;
export type Span = ReturnType<typeof otelSpanJson>;
export type Assessment = NonNullable<TraceInfo['assessments']>[number];

/** One page of a search: the list under its own name, and a token while more pages follow. */
type Page<Field extends string, T> = { [F in Field]?: T[] } & { next_page_token?: string };

/** The answer of each endpoint the UI calls, by its path under ajax-api/2.0/mlflow/. */
export type Responses = {
  'experiments/search': Page<'experiments', Experiment>;
  'experiments/get': { experiment: Experiment };
  'runs/search': Page<'runs', Run>;
  'runs/get': { run: Run };
  'metrics/get-history-bulk-interval': { metrics?: Metric[] };
  'artifacts/list': Page<'files', FileInfo> & { root_uri?: string };
  'registered-models/search': Page<'registered_models', RegisteredModel>;
  'registered-models/get': { registered_model: RegisteredModel };
  'model-versions/search': Page<'model_versions', ModelVersion>;
  'model-versions/get': { model_version: ModelVersion };
  // edits: the UI reads the page again after each, so their answers (an empty object or the run's info) go unread
  'runs/update': object;
  'runs/set-tag': object;
  'runs/delete-tag': object;
  'runs/delete': object;
  'runs/restore': object;
  'experiments/update': object;
  'experiments/delete': object;
  'experiments/restore': object;
  'experiments/set-experiment-tag': object;
  'registered-models/alias': object;
  'registered-models/update': object;
  'registered-models/set-tag': object;
  'registered-models/delete-tag': object;
  'model-versions/update': object;
  'model-versions/set-tag': object;
  'model-versions/delete-tag': object;
};
export type Endpoint = keyof Responses;

/** The answers of MLflow 3's endpoints the UI calls, under ajax-api/3.0/mlflow/. */
export type Responses3 = {
  'traces/search': Page<'traces', TraceInfo>;
  'traces/get': { trace: { trace_info: TraceInfo; spans: Span[] } };
  /** GET traces/<trace id>: the trace's info alone */
  [info: `traces/tr-${string}`]: { trace: { trace_info: TraceInfo } };
};
export type Endpoint3 = keyof Responses3;
/** The endpoints that answer in pages. */
export type PagedEndpoint = { [E in Endpoint]: 'next_page_token' extends keyof Responses[E] ? E : never }[Endpoint];
