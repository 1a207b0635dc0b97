import { z } from 'zod';
import { invalidParameter } from './errors.ts';

// MLflow's JSON wire: protobuf messages as the official client writes and reads them (snake_case field names,
// int64 as JSON numbers or numeric strings, enums by name or number, doubles as numbers or the strings "NaN",
// "Infinity", "-Infinity"). Unset fields and empty lists are left out, as MLflow's server does.

// ---- request field types -------------------------------------------------------------------------------------

/** A string field; a GET query string may repeat a key, the last value wins as in protobuf. */
export const str = () => z.preprocess((v) => (Array.isArray(v) ? v[v.length - 1] : v), z.string());

/** An int64 field: a JSON number or a numeric string (query strings, protobuf's own JSON). */
export const int64 = () =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v),
    z
      .number({ message: 'expected an integer' })
      .int({ message: 'expected an integer' })
      .refine(Number.isSafeInteger, { message: 'expected an integer of at most 2^53' }),
  );

/** A double field: a number, or the strings protobuf's JSON uses for the values JSON has no literal for. */
export const double = () =>
  z.preprocess((v) => {
    if (typeof v !== 'string') return v;
    const s = v.trim();
    if (s === 'NaN') return Number.NaN;
    if (s === 'Infinity' || s === 'inf') return Number.POSITIVE_INFINITY;
    if (s === '-Infinity' || s === '-inf') return Number.NEGATIVE_INFINITY;
    return s !== '' && Number.isFinite(Number(s)) ? Number(s) : v;
  }, z.custom<number>((v) => typeof v === 'number', { message: 'expected a double' }));

/** A repeated field; a GET query string with a single value gives a scalar. */
export const list = <T extends z.ZodType>(item: T) =>
  z.preprocess((v) => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]), z.array(item));

/** An enum field, by name or by number as protobuf's JSON allows. */
export function protoEnum<const N extends readonly string[]>(names: Record<number, N[number]>) {
  const byName = new Set(Object.values(names));
  return z.preprocess(
    (v) => {
      if (typeof v === 'number') return names[v] ?? v;
      if (typeof v === 'string' && /^\d+$/.test(v)) return names[Number(v)] ?? v;
      return v;
    },
    z.string().refine((s) => byName.has(s), { message: `expected one of ${[...byName].join(', ')}` }),
  ) as unknown as z.ZodType<N[number]>;
}

export const RUN_STATUSES = { 1: 'RUNNING', 2: 'SCHEDULED', 3: 'FINISHED', 4: 'FAILED', 5: 'KILLED' } as const;
export type RunStatus = (typeof RUN_STATUSES)[keyof typeof RUN_STATUSES];
export const runStatus = () => protoEnum<RunStatus[]>(RUN_STATUSES);

export const VIEW_TYPES = { 1: 'ACTIVE_ONLY', 2: 'DELETED_ONLY', 3: 'ALL' } as const;
export type ViewType = (typeof VIEW_TYPES)[keyof typeof VIEW_TYPES];
export const viewType = () => protoEnum<ViewType[]>(VIEW_TYPES);

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
export function statusFromWire(s: LoggedModelWireStatus): LoggedModelStatus {
  if (s === 'LOGGED_MODEL_READY') return 'READY';
  if (s === 'LOGGED_MODEL_UPLOAD_FAILED') return 'FAILED';
  if (s === 'LOGGED_MODEL_PENDING') return 'PENDING';
  throw invalidParameter(`Invalid value ${s} for parameter 'status' supplied.`);
}

export const keyValue = () => z.object({ key: str(), value: str().optional() });

// ---- values ------------------------------------------------------------------------------------------------------

/** A double as protobuf's JSON writes it. */
export function doubleJson(value: number, isNan = false): number | string {
  if (isNan || Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return 'Infinity';
  if (value === Number.NEGATIVE_INFINITY) return '-Infinity';
  return value;
}

/** MLflow's page token: base64 of {"offset": n}; anything else is INVALID_PARAMETER_VALUE. */
export function encodeOffsetToken(offset: number): string {
  return Buffer.from(JSON.stringify({ offset })).toString('base64');
}

export function decodeOffsetToken(token: string | undefined): number {
  if (!token) return 0;
  let offset: unknown;
  try {
    offset = (JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as { offset?: unknown }).offset;
  } catch {
    offset = undefined;
  }
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0) {
    throw invalidParameter(`Invalid page token, could not base64-decode or parse offset: '${token}'.`);
  }
  return offset;
}

// ---- response shapes ---------------------------------------------------------------------------------------------

export type KeyValue = { key: string; value: string };

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
