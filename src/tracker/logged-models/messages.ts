import { z } from 'zod';
import { artifactPathField } from '../artifacts/paths.ts';
import { invalidParameter } from '../errors.ts';
import { bool, idList, int64, keyValue, list, optionalStr, str, type KeyValue } from '../wire/fields.ts';
import { loggedModelStatus, statusFromWire } from '../wire/json.ts';
import { checkKey, experimentId, LIMITS, truncate } from '../wire/rules.ts';

// The logged model endpoints' request messages (MLflow 3), parsed and checked once. The model id comes from the
// path; the client also repeats it in some bodies.

const BAD_NAME_CHARS = ['/', ':', '.', '%', '"', "'"];

const checkedKeys = (kind: 'params' | 'tags') => (items: KeyValue[]) => {
  items.forEach((p, i) => {
    checkKey(p.key, `${kind}[${i}].key`);
  });
  return items;
};

export const CreateLoggedModel = z
  .object({
    experiment_id: experimentId(),
    name: str().optional(),
    model_type: optionalStr(),
    source_run_id: optionalStr(),
    params: list(keyValue()).transform(checkedKeys('params')),
    tags: list(keyValue()).transform(checkedKeys('tags')),
  })
  .transform((m) => {
    if (m.name !== undefined && (m.name === '' || BAD_NAME_CHARS.some((c) => m.name!.includes(c)))) {
      throw invalidParameter(
        `Invalid model name ('${m.name}') provided. Model name must be a non-empty string and cannot contain the ` +
          `following characters: ('/', ':', '.', '%', '"', "'")`,
      );
    }
    return {
      experimentId: m.experiment_id,
      name: m.name,
      modelType: m.model_type,
      sourceRunId: m.source_run_id,
      params: m.params,
      tags: m.tags,
    };
  });

export const SearchLoggedModels = z.object({
  experiment_ids: idList().refine((ids) => ids.length > 0, { params: { missing: true } }),
  filter: optionalStr(),
  datasets: list(z.object({ dataset_name: str(), dataset_digest: optionalStr() })),
  max_results: int64()
    .optional()
    .transform((n) => n || 50),
  order_by: list(
    z.object({ field_name: str(), ascending: z.boolean().optional(), dataset_name: optionalStr(), dataset_digest: optionalStr() }),
  ),
  page_token: optionalStr(),
});

export const GetLoggedModel = z.object({ allow_deleted: bool().optional().catch(false) });

export const FinalizeLoggedModel = z.object({ status: loggedModelStatus() }).transform((m) => {
  const status = statusFromWire(m.status);
  if (!status) throw invalidParameter(`Invalid value ${m.status} for parameter 'status' supplied.`);
  return status;
});

export const LogLoggedModelParams = z.object({ params: list(keyValue()).transform(checkedKeys('params')) });

export const SetLoggedModelTags = z.object({
  tags: list(keyValue())
    .transform(checkedKeys('tags'))
    .transform((tags) => tags.map((t) => ({ key: t.key, value: truncate(t.value, LIMITS.tagValueLength) }))),
});

export const ModelDirectory = z.object({ artifact_directory_path: artifactPathField() });
export const ModelFile = z.object({ artifact_file_path: artifactPathField() });
