import { resolve } from 'node:path';
import { z } from 'zod';
import { invalidParameter } from '../errors.ts';
import { idList, int64, keyValue, list, optionalStr, requiredStr, strOrEmpty, viewType } from '../wire/fields.ts';
import { checkExperimentName, checkKey, checkLength, experimentId, LIMITS } from '../wire/rules.ts';

// The experiment endpoints' request messages, parsed and checked once into what the store and search take.

function checkExperimentTag<T extends { key: string; value: string }>(tag: T): T {
  checkKey(tag.key, 'key');
  checkLength('value', LIMITS.experimentTagValueLength, tag.value);
  return tag;
}

export const CreateExperiment = z.object({
  name: requiredStr().transform((name) => checkExperimentName(name)),
  // A relative local path is made absolute against the server's folder, as MLflow does.
  artifact_location: optionalStr().transform((loc) => (loc && !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(loc) ? resolve(loc) : loc)),
  tags: list(keyValue().transform(checkExperimentTag)),
});

export const ExperimentRef = z.object({ experiment_id: experimentId() });
export const GetByName = z.object({ experiment_name: requiredStr() });
export const RenameExperiment = ExperimentRef.extend({ new_name: requiredStr().transform((name) => checkExperimentName(name)) });
export const SetExperimentTag = ExperimentRef.extend({ key: requiredStr(), value: strOrEmpty() }).transform((m) => ({
  experimentId: m.experiment_id,
  tag: checkExperimentTag({ key: m.key, value: m.value }),
}));
export const DeleteExperimentTag = ExperimentRef.extend({ key: requiredStr() });

export const SearchExperiments = z.object({
  max_results: int64()
    .optional()
    .transform((n) => n ?? 1000),
  page_token: optionalStr(),
  filter: optionalStr(),
  order_by: list(z.string()),
  view_type: viewType().optional(),
});

const MAX_DATASET_EXPERIMENTS = 20;

export const SearchDatasets = z.object({ experiment_ids: idList() }).transform((m) => {
  if (m.experiment_ids.length === 0) throw invalidParameter('SearchDatasets request must specify at least one experiment_id.');
  if (m.experiment_ids.length > MAX_DATASET_EXPERIMENTS) {
    throw invalidParameter(
      `SearchDatasets request cannot specify more than ${MAX_DATASET_EXPERIMENTS} experiment_ids. Received ${m.experiment_ids.length} experiment_ids.`,
    );
  }
  return m;
});
