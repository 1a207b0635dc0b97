import { z } from 'zod';
import { invalidParameter } from '../errors.ts';
import {
  double,
  idList,
  int64,
  keyValue,
  list,
  optionalStr,
  requiredStr,
  runMessage,
  runStatus,
  str,
  strOrEmpty,
  viewType,
  type KeyValue,
} from '../wire/fields.ts';
import { checkBatchLimits, checkKey, checkLength, experimentIdOf, LIMITS, truncate } from '../wire/rules.ts';

// The run endpoints' request messages, parsed and checked once (MLflow's required fields, names, limits and
// words) into what the stores take: a store never sees a raw message.

export const RUN_NAME_TAG = 'mlflow.runName';
export const USER_TAG = 'mlflow.user';

export type MetricPoint = {
  key: string;
  value: number;
  timestamp: number;
  step: number;
  model_id?: string | undefined;
  dataset_name?: string | undefined;
  dataset_digest?: string | undefined;
};

/** What log-batch, log-metric, log-parameter and set-tag write: checked, values cut to MLflow's lengths. */
export type Batch = { metrics: MetricPoint[]; params: KeyValue[]; tags: KeyValue[] };

const metricShape = {
  key: requiredStr(),
  value: double(),
  timestamp: int64(),
  step: int64()
    .optional()
    .transform((s) => s ?? 0),
  model_id: optionalStr(),
  dataset_name: optionalStr(),
  dataset_digest: optionalStr(),
};

const pointOf = (m: z.output<z.ZodObject<typeof metricShape>>): MetricPoint => ({
  key: m.key,
  value: m.value,
  timestamp: m.timestamp,
  step: m.step,
  ...(m.model_id ? { model_id: m.model_id } : {}),
  ...(m.dataset_name ? { dataset_name: m.dataset_name } : {}),
  ...(m.dataset_digest ? { dataset_digest: m.dataset_digest } : {}),
});

const pyStr = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/**
 * MLflow's checks of a batch, in its order (names and timestamps, then the batch limits, then unique param keys),
 * before anything is written. `single` names fields as the one-value endpoints do (no `metrics[i].` prefix).
 */
export function checkedBatch(batch: Batch, opts: { single?: boolean } = {}): Batch {
  const at = (kind: string, i: number) => (opts.single ? '' : `${kind}[${i}].`);
  batch.metrics.forEach((m, i) => {
    checkKey(m.key, `${at('metrics', i)}name`);
    if (!Number.isInteger(m.timestamp) || m.timestamp < 0) {
      throw invalidParameter(
        `Invalid value ${m.timestamp} for parameter '${at('metrics', i)}timestamp' supplied: metric '${m.key}' ` +
          `(value=${m.value}). Timestamp must be a nonnegative long (64-bit integer) `,
      );
    }
  });
  batch.params.forEach((p, i) => {
    checkKey(p.key, `${at('params', i)}key`);
  });
  batch.tags.forEach((t, i) => {
    checkKey(t.key, `${at('tags', i)}key`);
  });
  checkBatchLimits(batch.metrics.length, batch.params.length, batch.tags.length);
  const seen = new Set<string>();
  const dupes = batch.params.filter((p) => (seen.has(p.key) ? true : (seen.add(p.key), false))).map((p) => p.key);
  if (dupes.length > 0) {
    throw invalidParameter(
      `Duplicate parameter keys have been submitted: [${dupes.map(pyStr).join(', ')}]. ` +
        'Please ensure the request contains only one param value per param key.',
    );
  }
  return {
    metrics: batch.metrics,
    params: batch.params.map((p) => ({ key: p.key, value: truncate(p.value, LIMITS.paramValueLength) })),
    tags: batch.tags.map((t) => ({ key: t.key, value: truncate(t.value, LIMITS.tagValueLength) })),
  };
}

const single = (runId: string, batch: Batch) => ({ runId, batch: checkedBatch(batch, { single: true }), single: true });

export const RunRef = runMessage({}).transform((m) => m.run_id);

export const LogBatch = runMessage({
  metrics: list(z.object(metricShape)),
  params: list(keyValue()),
  tags: list(keyValue()),
}).transform((m) => ({
  runId: m.run_id,
  batch: checkedBatch({ metrics: m.metrics.map(pointOf), params: m.params, tags: m.tags }),
  single: false,
}));

export const LogMetric = runMessage(metricShape).transform((m) => single(m.run_id, { metrics: [pointOf(m)], params: [], tags: [] }));

export const LogParameter = runMessage({ key: requiredStr(), value: strOrEmpty() }).transform((m) =>
  single(m.run_id, { metrics: [], params: [{ key: m.key, value: m.value }], tags: [] }),
);

export const SetTag = runMessage({ key: requiredStr(), value: strOrEmpty() }).transform((m) =>
  single(m.run_id, { metrics: [], params: [], tags: [{ key: m.key, value: m.value }] }),
);

export const DeleteTag = runMessage({ key: requiredStr() });

export const CreateRun = z
  .object({
    experiment_id: optionalStr(),
    user_id: strOrEmpty(),
    run_name: optionalStr(),
    start_time: int64().optional(),
    tags: list(keyValue()),
  })
  .transform((m) => {
    const tags = new Map<string, string>();
    m.tags.forEach((t, i) => {
      checkKey(t.key, `tags[${i}].key`);
      tags.set(t.key, truncate(t.value, LIMITS.tagValueLength));
    });
    const nameTag = tags.get(RUN_NAME_TAG);
    if (m.run_name && nameTag && m.run_name !== nameTag) {
      throw invalidParameter(
        "Both 'run_name' argument and 'mlflow.runName' tag are specified, but with different values " +
          `(run_name='${m.run_name}', mlflow.runName='${nameTag}').`,
      );
    }
    if (m.user_id && !tags.has(USER_TAG)) tags.set(USER_TAG, m.user_id);
    return {
      experimentId: experimentIdOf(m.experiment_id ?? '0'),
      userId: m.user_id,
      /** The name asked for, by argument or tag; undefined: the server makes one up. */
      runName: m.run_name || nameTag || undefined,
      startTime: m.start_time,
      tags: [...tags].map(([key, value]) => ({ key, value })),
    };
  });

export const UpdateRun = runMessage({ status: runStatus().optional(), end_time: int64().optional(), run_name: optionalStr() });

export const SearchRuns = z.object({
  experiment_ids: idList(),
  filter: optionalStr(),
  run_view_type: viewType().optional(),
  max_results: int64()
    .optional()
    .transform((n) => n ?? 1000),
  order_by: list(z.string()),
  page_token: optionalStr(),
});

const dataset = z.object({
  name: requiredStr(),
  digest: requiredStr(),
  source_type: requiredStr(),
  source: requiredStr(),
  schema: optionalStr(),
  profile: optionalStr(),
});
export type DatasetInput = { tags: KeyValue[]; dataset: z.output<typeof dataset> };

export const LogInputs = runMessage({
  datasets: list(z.object({ tags: list(keyValue()), dataset })),
  models: list(z.object({ model_id: str() })),
}).transform((m) => {
  // MLflow's lengths; the first input of a (name, digest) wins, as in MLflow.
  const unique = new Map<string, DatasetInput>();
  for (const d of m.datasets) {
    checkLength('dataset name', LIMITS.datasetNameLength, d.dataset.name);
    checkLength('dataset digest', LIMITS.datasetDigestLength, d.dataset.digest);
    checkLength('dataset source', LIMITS.datasetSourceLength, d.dataset.source);
    checkLength('dataset schema', LIMITS.datasetSchemaLength, d.dataset.schema);
    checkLength('dataset profile', LIMITS.datasetProfileLength, d.dataset.profile);
    for (const tag of d.tags) {
      checkLength('input tag key', LIMITS.inputTagKeyLength, tag.key);
      checkLength('input tag value', LIMITS.inputTagValueLength, tag.value);
    }
    const key = JSON.stringify([d.dataset.name, d.dataset.digest]);
    if (!unique.has(key)) unique.set(key, d);
  }
  return { runId: m.run_id, datasets: [...unique.values()], models: [...new Set(m.models.map((x) => x.model_id).filter(Boolean))] };
});

export const LogOutputs = runMessage({
  models: z.array(
    z.object({
      model_id: requiredStr(),
      step: int64()
        .optional()
        .transform((s) => s ?? 0),
    }),
  ),
});

export const LogModel = runMessage({ model_json: requiredStr() }).transform((m) => {
  try {
    return { runId: m.run_id, model: JSON.parse(m.model_json) as unknown };
  } catch {
    throw invalidParameter(`Invalid value for parameter 'model_json' supplied: it is not valid JSON.`);
  }
});

export const MetricHistory = runMessage({
  metric_key: requiredStr(),
  max_results: int64().optional(),
  page_token: optionalStr(),
}).transform((m) => {
  if (m.max_results !== undefined && m.max_results <= 0) {
    throw invalidParameter(`Invalid value ${m.max_results} for parameter 'max_results' supplied. It must be a positive integer.`);
  }
  return m;
});

const MAX_BULK_RUNS = 100;
const MAX_POINTS_PER_RUN = 2500;

export const MetricHistoryBulkInterval = z
  .object({
    run_ids: list(z.string()).refine((ids) => ids.length > 0, { params: { missing: true } }),
    metric_key: requiredStr(),
    start_step: int64().optional(),
    end_step: int64().optional(),
    // The UI asks for what a chart can show; without max_results a run gives at most 320 points here.
    max_results: int64().optional(),
  })
  .transform((m) => {
    const words = (message: string) => invalidParameter(`${message} See the API docs for more information about request parameters.`);
    if (m.run_ids.length > MAX_BULK_RUNS) {
      throw words(
        `GetMetricHistoryBulkInterval request must specify at most ${MAX_BULK_RUNS} run_ids. Received ${m.run_ids.length} run_ids.`,
      );
    }
    if (m.max_results !== undefined && (m.max_results < 1 || m.max_results > MAX_POINTS_PER_RUN)) {
      throw words(`max_results must be between 1 and ${MAX_POINTS_PER_RUN}.`);
    }
    if (m.start_step !== undefined && m.end_step !== undefined && m.start_step > m.end_step) {
      throw invalidParameter(`end_step must be greater than start_step. Found start_step=${m.start_step} and end_step=${m.end_step}.`);
    }
    if ((m.start_step === undefined) !== (m.end_step === undefined)) {
      throw invalidParameter('If either start step or end step are specified, both must be specified.');
    }
    return { ...m, max_results: m.max_results ?? 320 };
  });

const MAX_BULK_HISTORY_RUNS = 100;

/** The UI's whole histories of one metric for some runs (GET metrics/get-history-bulk, repeated run_id). */
export const MetricHistoryBulk = z
  .object({ run_id: list(z.string()), metric_key: optionalStr(), max_results: int64().optional() })
  .transform((m) => {
    if (m.run_id.length === 0) throw invalidParameter('GetMetricHistoryBulk request must specify at least one run_id.');
    if (m.run_id.length > MAX_BULK_HISTORY_RUNS) {
      throw invalidParameter(
        `GetMetricHistoryBulk request cannot specify more than ${MAX_BULK_HISTORY_RUNS} run_ids. Received ${m.run_id.length} run_ids.`,
      );
    }
    if (!m.metric_key) throw invalidParameter('GetMetricHistoryBulk request must specify a metric_key.');
    if (m.max_results !== undefined && m.max_results < 1) {
      throw invalidParameter(`Invalid value ${m.max_results} for parameter 'max_results' supplied. It must be a positive integer.`);
    }
    return { runIds: [...new Set(m.run_id)].sort(), key: m.metric_key, maxResults: m.max_results ?? 25_000 };
  });
