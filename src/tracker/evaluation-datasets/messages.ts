import { z } from 'zod';
import { invalidParameter } from '../errors.ts';
import { idList, int64, list, optionalStr, requiredStr, type KeyValue } from '../wire/fields.ts';
import { experimentIdOf } from '../wire/rules.ts';

// The evaluation dataset endpoints' request messages (MLflow 3, /api/3.0/mlflow/datasets/...). Tags and records
// travel as JSON text inside the message, as MLflow's protos carry them.

function jsonField<T>(field: string, check: (v: unknown) => v is T) {
  return (text: string): T => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw invalidParameter(`Invalid value for parameter '${field}' supplied: it is not valid JSON.`);
    }
    if (!check(value)) throw invalidParameter(`Invalid value for parameter '${field}' supplied: unexpected JSON shape.`);
    return value;
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const tagsOf = (m: Record<string, unknown>): KeyValue[] => Object.entries(m).map(([key, value]) => ({ key, value: String(value) }));

export type EvaluationRecord = {
  inputs: Record<string, unknown>;
  expectations?: Record<string, unknown>;
  tags?: Record<string, unknown>;
  source?: unknown;
};

export const CreateEvaluationDataset = z.object({
  name: requiredStr(),
  experiment_ids: idList().transform((ids) => ids.map((id) => experimentIdOf(id))),
  tags: optionalStr().transform((t) => (t ? tagsOf(jsonField('tags', isObject)(t)) : [])),
});

export const SetEvaluationDatasetTags = z.object({ tags: requiredStr().transform((t) => tagsOf(jsonField('tags', isObject)(t))) });

export const DatasetExperiments = z.object({ experiment_ids: idList().transform((ids) => ids.map((id) => experimentIdOf(id))) });

export const SearchEvaluationDatasets = z.object({
  experiment_ids: idList().transform((ids) => ids.map((id) => experimentIdOf(id))),
  filter_string: optionalStr(),
  max_results: int64()
    .optional()
    .transform((n) => n ?? 1000),
  order_by: list(z.string()),
  page_token: optionalStr(),
});

export const UpsertRecords = z.object({
  records: requiredStr().transform((text) =>
    jsonField('records', (v): v is EvaluationRecord[] => Array.isArray(v) && v.every((r) => isObject(r) && isObject(r.inputs)))(text),
  ),
});

export const GetRecords = z.object({
  max_results: int64()
    .optional()
    .transform((n) => n ?? 1000),
  page_token: optionalStr(),
});
export const DeleteRecords = z.object({ dataset_record_ids: list(z.string()) });
