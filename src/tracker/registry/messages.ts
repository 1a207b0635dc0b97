import { z } from 'zod';
import { checkArtifactPath } from '../artifacts/paths.ts';
import { checkLength, LIMITS } from '../wire/rules.ts';
import { bool, int64, keyValue, list, optionalStr, requiredStr, str, strOrEmpty } from '../wire/fields.ts';
import { canonicalStage, checkAlias, checkArchivable, checkModelName, checkSettableAlias, checkTagKeys, parseVersion } from './validate.ts';

// The registry's request messages (model_registry.proto), parsed and checked once into what its stores take.

const modelName = (field = 'name') => requiredStr().transform((name) => checkModelName(name, field));
const version = () => z.union([str(), z.number()]).transform((v) => parseVersion(v));
// MLflow's registry tag rules: a key that is not blank, keys up to 250 characters and values up to 100 000.
const checkTag = (t: { key: string; value: string }) => {
  checkTagKeys([t]);
  checkLength('key', LIMITS.registryTagKeyLength, t.key);
  checkLength('value', LIMITS.registryTagValueLength, t.value);
  return t;
};
const tags = () => list(keyValue().transform(checkTag));

export const NameRef = z.object({ name: requiredStr() });
export const CreateRegisteredModel = z.object({ name: modelName(), tags: tags(), description: strOrEmpty() });
export const RenameRegisteredModel = z.object({ name: requiredStr(), new_name: modelName('new_name') });
export const UpdateRegisteredModel = z.object({ name: requiredStr(), description: str().optional() });
export const GetLatestVersions = z.object({
  name: requiredStr(),
  stages: list(z.string()).transform((s) => [...new Set(s.map(canonicalStage))]),
});
export const SetRegisteredModelTag = z
  .object({ name: requiredStr(), key: requiredStr(), value: strOrEmpty() })
  .transform((m) => ({ ...m, ...checkTag(m) }));
export const DeleteRegisteredModelTag = z.object({ name: requiredStr(), key: requiredStr() });
export const AliasRef = z.object({ name: requiredStr(), alias: requiredStr().transform(checkAlias) });
export const SetAlias = z.object({ name: requiredStr(), alias: requiredStr().transform(checkSettableAlias), version: version() });

export const SearchRegistry = z.object({
  filter: optionalStr(),
  max_results: int64().optional(),
  order_by: list(z.string()),
  page_token: optionalStr(),
});

export const VersionRef = z.object({ name: requiredStr(), version: version() });
export const CreateModelVersion = z.object({
  name: modelName(),
  source: requiredStr(),
  run_id: optionalStr(),
  run_link: strOrEmpty(),
  description: strOrEmpty(),
  tags: tags(),
  model_id: optionalStr(),
});
export const UpdateModelVersion = VersionRef.extend({ description: str().optional() });
export const TransitionStage = VersionRef.extend({
  stage: requiredStr().transform(canonicalStage),
  archive_existing_versions: bool()
    .optional()
    .transform((b) => b === true),
}).transform((m) => {
  if (m.archive_existing_versions) checkArchivable(m.stage);
  return m;
});
export const SetModelVersionTag = VersionRef.extend({ key: requiredStr(), value: strOrEmpty() }).transform((m) => ({
  ...m,
  ...checkTag(m),
}));
export const DeleteModelVersionTag = VersionRef.extend({ key: requiredStr() });
export const ModelVersionFile = VersionRef.extend({ path: requiredStr().transform((p) => checkArtifactPath(p)) });
