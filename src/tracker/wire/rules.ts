import { invalidParameter } from '../errors.ts';
import { requiredStr } from './fields.ts';

// MLflow's limits and name rules (mlflow/utils/validation.py), with its messages, so a client sees the same
// refusal from this server as from MLflow's. Applied at the edge, as a message is parsed; stores get values that
// passed them.

export const LIMITS = {
  metricsPerBatch: 1000,
  paramsTagsPerBatch: 100,
  entitiesPerBatch: 1000,
  keyLength: 250,
  paramValueLength: 6000,
  tagValueLength: 8000,
  experimentNameLength: 500,
  experimentTagValueLength: 20000,
  datasetNameLength: 500,
  datasetDigestLength: 36,
  datasetSourceLength: 65535,
  datasetSchemaLength: 1048575,
  datasetProfileLength: 16777215,
  inputTagKeyLength: 255,
  inputTagValueLength: 500,
  registryTagKeyLength: 250,
  registryTagValueLength: 100_000,
} as const;

const NAME_CHARS = /^[/\p{L}\p{N}_.\- :]*$/u;

const invalidValue = (path: string, value: unknown, why?: string) =>
  invalidParameter(`Invalid value ${JSON.stringify(value)} for parameter '${path}' supplied${why ? `: ${why}` : '.'}`);

/** A name used as a file path in some stores: MLflow refuses names that would resolve to other names. */
function resolvesElsewhere(name: string): boolean {
  if (name === '' || name.startsWith('/') || name.endsWith('/') || name.includes('//')) return true;
  return name.split('/').some((s) => s === '.' || s === '..');
}

/** Param, metric and tag keys. */
export function checkKey(name: string | undefined, path: string): string {
  if (name === undefined || name === null) throw invalidParameter(`Missing value for required parameter '${path}'.`);
  if (!NAME_CHARS.test(name)) {
    throw invalidValue(
      path,
      name,
      'Names may only contain alphanumerics, underscores (_), dashes (-), periods (.), spaces ( ), colon(:) and slashes (/).',
    );
  }
  if (resolvesElsewhere(name)) {
    throw invalidValue(
      path,
      name,
      'Names may be treated as files in certain cases, and must not resolve to other names when treated as such.',
    );
  }
  checkLength(path, LIMITS.keyLength, name);
  return name;
}

export function checkLength(what: string, limit: number, value: string | undefined): void {
  if (value !== undefined && value.length > limit) {
    throw invalidParameter(`'${what}' exceeds the maximum length of ${limit} characters`);
  }
}

/**
 * Param and run tag values beyond MLflow's limits are cut to the limit, as MLflow's server does by default
 * (MLFLOW_TRUNCATE_LONG_VALUES), rather than refused: the client sends them whole and expects the call to succeed.
 */
export const truncate = (value: string, limit: number): string => (value.length > limit ? value.slice(0, limit) : value);

export function checkBatchLimits(metrics: number, params: number, tags: number): void {
  const limit = (entity: string, max: number, got: number) => {
    if (got > max) {
      throw invalidParameter(
        `A batch logging request can contain at most ${max} ${entity}. Got ${got} ${entity}. ` +
          `Please split up ${entity} across multiple requests and try again.`,
      );
    }
  };
  limit('metrics', LIMITS.metricsPerBatch, metrics);
  limit('params', LIMITS.paramsTagsPerBatch, params);
  limit('tags', LIMITS.paramsTagsPerBatch, tags);
  limit('metrics, params, and tags', LIMITS.entitiesPerBatch, metrics + params + tags);
}

export function checkExperimentName(name: string | undefined): string {
  if (!name) throw invalidParameter(`Invalid experiment name: '${name ?? ''}'`);
  checkLength('name', LIMITS.experimentNameLength, name);
  return name;
}

/** An experiment id as text: an integer of at most 18 digits (a bigint, whatever the digits). */
export const EXPERIMENT_ID = /^\d{1,18}$/;

/** Experiment ids are integers; MLflow says so in these words. */
export function experimentIdOf(id: string | undefined): number {
  const text = String(id ?? '').trim();
  if (!EXPERIMENT_ID.test(text)) {
    throw invalidParameter(`Invalid experiment ID '${id ?? ''}'. Experiment ID must be a valid integer.`);
  }
  return Number(text);
}

/** A required experiment id field, as the integer it must be. */
export const experimentId = () => requiredStr().transform((id) => experimentIdOf(id));
