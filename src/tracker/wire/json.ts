import type { Context } from 'hono';
import { protoEnum, type KeyValue, type RunStatus } from './fields.ts';

// MLflow's JSON answers: protobuf messages as its server writes them. Unset fields and empty lists are left out,
// as MLflow's server does; doubles JSON has no literal for are the strings "NaN", "Infinity", "-Infinity".

// Logged model status: the database keeps the short names, the wire the proto's.
export const LOGGED_MODEL_STATUSES = {
  0: 'LOGGED_MODEL_STATUS_UNSPECIFIED',
  1: 'LOGGED_MODEL_PENDING',
  2: 'LOGGED_MODEL_READY',
  3: 'LOGGED_MODEL_UPLOAD_FAILED',
} as const;
export type LoggedModelWireStatus = (typeof LOGGED_MODEL_STATUSES)[keyof typeof LOGGED_MODEL_STATUSES];
export const loggedModelStatus = () => protoEnum<LoggedModelWireStatus[]>(LOGGED_MODEL_STATUSES);
export type LoggedModelStatus = 'PENDING' | 'READY' | 'FAILED';
export const statusToWire = (s: LoggedModelStatus): LoggedModelWireStatus =>
  s === 'READY' ? 'LOGGED_MODEL_READY' : s === 'FAILED' ? 'LOGGED_MODEL_UPLOAD_FAILED' : 'LOGGED_MODEL_PENDING';
export const statusFromWire = (s: LoggedModelWireStatus): LoggedModelStatus | undefined =>
  s === 'LOGGED_MODEL_READY'
    ? 'READY'
    : s === 'LOGGED_MODEL_UPLOAD_FAILED'
      ? 'FAILED'
      : s === 'LOGGED_MODEL_PENDING'
        ? 'PENDING'
        : undefined;

/** An answer whose JSON is already text (written by the database, sql-json.ts), sent as c.json() sends one. */
export const jsonText = (c: Context, text: string) => c.body(text, 200, { 'Content-Type': 'application/json' });

// ---- values ------------------------------------------------------------------------------------------------------

/** A double as protobuf's JSON writes it. */
export function doubleJson(value: number, isNan = false): number | string {
  if (isNan || Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return 'Infinity';
  if (value === Number.NEGATIVE_INFINITY) return '-Infinity';
  return value;
}

/**
 * JSON as Python's json.dumps writes it (", " and ": " between items, non-ASCII escaped): the form MLflow stores
 * in tags its clients compare as strings (a logged model's mlflow.modelVersions).
 */
export function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pythonJson(k)}: ${pythonJson(v)}`)
      .join(', ')}}`;
  }
  if (typeof value === 'string')
    return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return JSON.stringify(value) ?? 'null';
}

// ---- response shapes ---------------------------------------------------------------------------------------------

export type ExperimentRow = {
  experiment_id: string | number;
  name: string;
  artifact_location: string;
  lifecycle_stage: string;
  creation_time: number;
  last_update_time: number;
};

export function experimentJson(row: ExperimentRow, tags: KeyValue[]) {
  return {
    experiment_id: String(row.experiment_id),
    name: row.name,
    artifact_location: row.artifact_location,
    lifecycle_stage: row.lifecycle_stage,
    last_update_time: Number(row.last_update_time),
    creation_time: Number(row.creation_time),
    ...(tags.length ? { tags } : {}),
  };
}

export type RunRow = {
  run_id: string;
  experiment_id: string | number;
  name: string;
  user_id: string;
  status: RunStatus;
  start_time: number;
  end_time: number | null;
  lifecycle_stage: string;
  artifact_uri: string;
};

export function runInfoJson(row: RunRow) {
  return {
    run_id: row.run_id,
    run_uuid: row.run_id,
    run_name: row.name,
    experiment_id: String(row.experiment_id),
    user_id: row.user_id,
    status: row.status,
    start_time: Number(row.start_time),
    ...(row.end_time !== null && row.end_time !== undefined ? { end_time: Number(row.end_time) } : {}),
    artifact_uri: row.artifact_uri,
    lifecycle_stage: row.lifecycle_stage,
  };
}

export type MetricRow = {
  key: string;
  value: number;
  is_nan: boolean;
  timestamp: number;
  step: number;
  run_id?: string | null;
  model_id?: string | null;
  dataset_name?: string | null;
  dataset_digest?: string | null;
};

export function metricJson(row: MetricRow) {
  return {
    key: row.key,
    value: doubleJson(Number(row.value), row.is_nan),
    timestamp: Number(row.timestamp),
    step: Number(row.step),
    ...(row.dataset_name ? { dataset_name: row.dataset_name } : {}),
    ...(row.dataset_digest ? { dataset_digest: row.dataset_digest } : {}),
    ...(row.model_id ? { model_id: row.model_id } : {}),
    ...(row.run_id ? { run_id: row.run_id } : {}),
  };
}

export type DatasetJson = {
  name: string;
  digest: string;
  source_type: string;
  source: string;
  schema?: string;
  profile?: string;
};

export type RunInputsJson = {
  dataset_inputs?: { tags?: KeyValue[]; dataset: DatasetJson }[];
  model_inputs?: { model_id: string }[];
};
export type RunOutputsJson = { model_outputs?: { model_id: string; step: number }[] };

export function runJson(
  row: RunRow,
  data: { metrics: MetricRow[]; params: KeyValue[]; tags: KeyValue[] },
  inputs: RunInputsJson,
  outputs: RunOutputsJson,
) {
  return {
    info: runInfoJson(row),
    data: {
      ...(data.metrics.length ? { metrics: data.metrics.map(metricJson) } : {}),
      ...(data.params.length ? { params: data.params } : {}),
      ...(data.tags.length ? { tags: data.tags } : {}),
    },
    inputs,
    outputs,
  };
}

export type LoggedModelRow = {
  model_id: string;
  experiment_id: string | number;
  name: string;
  artifact_location: string;
  creation_time: number;
  last_updated_time: number;
  status: LoggedModelStatus;
  status_message: string | null;
  lifecycle_stage: string;
  model_type: string | null;
  source_run_id: string | null;
};

export function loggedModelJson(row: LoggedModelRow, tags: KeyValue[], params: KeyValue[], metrics: MetricRow[]) {
  return {
    info: {
      model_id: row.model_id,
      experiment_id: String(row.experiment_id),
      name: row.name,
      creation_timestamp_ms: Number(row.creation_time),
      last_updated_timestamp_ms: Number(row.last_updated_time),
      artifact_uri: row.artifact_location,
      status: statusToWire(row.status),
      ...(row.model_type ? { model_type: row.model_type } : {}),
      ...(row.source_run_id ? { source_run_id: row.source_run_id } : {}),
      ...(row.status_message ? { status_message: row.status_message } : {}),
      ...(tags.length ? { tags } : {}),
    },
    data: {
      ...(params.length ? { params } : {}),
      ...(metrics.length ? { metrics: metrics.map(metricJson) } : {}),
    },
  };
}
