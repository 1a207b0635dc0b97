import type { Sql } from '../../platform/db/index.ts';
import type { TrackerDeps } from '../deps.ts';
import { doesNotExist, invalidParameter } from '../errors.ts';
import { loadModelVersions, type ModelVersionJson } from './load.ts';
import { lockRegisteredModel } from './registered-models.ts';
import { resolveSource } from './source.ts';
import { canonicalStage, checkAlias, checkArchivable, checkModelName, checkTagKeys, parseVersion } from './validate.ts';

type Deps = Pick<TrackerDeps, 'db' | 'now'>;
type Tag = { key: string; value: string };
type Ref = { name: string; version: string | number };

const versionNotFound = (name: string, version: string | number) => doesNotExist(`Model Version (name=${name}, version=${version}) not found`);

export async function getModelVersion(deps: Deps, ref: Ref, db: Sql = deps.db): Promise<ModelVersionJson> {
  const version = parseVersion(ref.version);
  const [found] = await loadModelVersions(db, [{ name: ref.name, version }]);
  if (!found) throw versionNotFound(ref.name, version);
  return found;
}

/**
 * Numbers versions 1, 2, ... per name. The registered model row is locked first, so concurrent creates for one
 * name queue behind each other and each reads the maximum the previous one wrote (deleted versions keep their
 * numbers, as in MLflow).
 */
export async function createModelVersion(
  deps: Deps,
  input: {
    name: string;
    source: string;
    runId?: string | undefined;
    modelId?: string | undefined;
    runLink?: string | undefined;
    description?: string | undefined;
    tags: Tag[];
  },
): Promise<ModelVersionJson> {
  checkModelName(input.name);
  checkTagKeys(input.tags);
  const resolved = await resolveSource(deps.db, { source: input.source, runId: input.runId, modelId: input.modelId });
  return deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, input.name);
    const now = deps.now();
    const [row] = await tx.query<{ version: number }>(
      `INSERT INTO tracker_model_versions
         (name, version, creation_time, last_updated_time, description, source, run_id, run_link, storage_location, model_id)
       SELECT $1, COALESCE(max(version), 0) + 1, $2, $2, $3, $4, $5, $6, $7, $8 FROM tracker_model_versions WHERE name = $1
       RETURNING version`,
      [input.name, now, input.description ?? '', resolved.source, resolved.runId, input.runLink ?? '', resolved.storageLocation, resolved.modelId],
    );
    const version = row!.version;
    await tx.query(`UPDATE tracker_registered_models SET last_updated_time = $2 WHERE name = $1`, [input.name, now]);
    const last = new Map(input.tags.map((t) => [t.key, t.value]));
    if (last.size > 0) {
      await tx.query(
        `INSERT INTO tracker_model_version_tags (name, version, key, value)
         SELECT $1, $2, k, v FROM unnest($3::text[], $4::text[]) AS t(k, v)`,
        [input.name, version, [...last.keys()], [...last.values()]],
      );
    }
    if (resolved.modelId) await noteVersionOnLoggedModel(tx, resolved.modelId, input.name, version, now);
    return getModelVersion(deps, { name: input.name, version }, tx);
  });
}

// The logged model lists the versions registered from it (tag mlflow.modelVersions, a JSON list), as MLflow does;
// the UI shows it on the model's page.
async function noteVersionOnLoggedModel(tx: Sql, modelId: string, name: string, version: number, now: number): Promise<void> {
  const rows = await tx.query<{ value: string }>(
    `SELECT value FROM tracker_logged_model_tags WHERE model_id = $1 AND key = 'mlflow.modelVersions' FOR UPDATE`,
    [modelId],
  );
  let list: { name: string; version: number }[] = [];
  try {
    const parsed = rows[0] ? JSON.parse(rows[0].value) : [];
    if (Array.isArray(parsed)) list = parsed;
  } catch {
    // an unreadable value is replaced
  }
  if (!list.some((v) => v.name === name && Number(v.version) === version)) list.push({ name, version });
  await tx.query(
    `INSERT INTO tracker_logged_model_tags (model_id, key, value) SELECT $1, 'mlflow.modelVersions', $2
      WHERE EXISTS (SELECT 1 FROM tracker_logged_models WHERE model_id = $1)
     ON CONFLICT (model_id, key) DO UPDATE SET value = EXCLUDED.value`,
    [modelId, JSON.stringify(list)],
  );
  await tx.query(`UPDATE tracker_logged_models SET last_updated_time = $2 WHERE model_id = $1`, [modelId, now]);
}

export async function updateModelVersion(deps: Deps, input: Ref & { description?: string | undefined }): Promise<ModelVersionJson> {
  const version = parseVersion(input.version);
  return deps.db.transaction(async (tx) => {
    const rows = await tx.query(
      `UPDATE tracker_model_versions SET description = COALESCE($3, description), last_updated_time = $4
        WHERE name = $1 AND version = $2 AND NOT deleted RETURNING version`,
      [input.name, version, input.description ?? null, deps.now()],
    );
    if (rows.length === 0) throw versionNotFound(input.name, version);
    return getModelVersion(deps, { name: input.name, version }, tx);
  });
}

/**
 * Moves a version to a stage (any spelling of None, Staging, Production, Archived). With archive_existing_versions
 * (Staging or Production only) the other versions in that stage move to Archived in the same transaction.
 */
export async function transitionStage(deps: Deps, input: Ref & { stage: string; archiveExistingVersions: boolean }): Promise<ModelVersionJson> {
  const version = parseVersion(input.version);
  const stage = canonicalStage(input.stage);
  if (input.archiveExistingVersions) checkArchivable(stage);
  return deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, input.name);
    const now = deps.now();
    const rows = await tx.query(
      `UPDATE tracker_model_versions SET current_stage = $3, last_updated_time = $4 WHERE name = $1 AND version = $2 AND NOT deleted RETURNING version`,
      [input.name, version, stage, now],
    );
    if (rows.length === 0) throw versionNotFound(input.name, version);
    if (input.archiveExistingVersions) {
      await tx.query(
        `UPDATE tracker_model_versions SET current_stage = 'Archived', last_updated_time = $4
          WHERE name = $1 AND version <> $2 AND current_stage = $3 AND NOT deleted`,
        [input.name, version, stage, now],
      );
    }
    await tx.query(`UPDATE tracker_registered_models SET last_updated_time = $2 WHERE name = $1`, [input.name, now]);
    return getModelVersion(deps, { name: input.name, version }, tx);
  });
}

/**
 * Deletes a version as MLflow does: the row stays (so its number is never reused) with its source and run
 * redacted; its aliases go.
 */
export async function deleteModelVersion(deps: Deps, ref: Ref): Promise<void> {
  const version = parseVersion(ref.version);
  await deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, ref.name).catch(() => {
      throw versionNotFound(ref.name, version);
    });
    const now = deps.now();
    const rows = await tx.query(
      `UPDATE tracker_model_versions
          SET deleted = true, last_updated_time = $3, description = '', user_id = '', source = 'REDACTED-SOURCE-PATH',
              run_id = 'REDACTED-RUN-ID', run_link = 'REDACTED-RUN-LINK', status_message = '', storage_location = NULL
        WHERE name = $1 AND version = $2 AND NOT deleted RETURNING version`,
      [ref.name, version, now],
    );
    if (rows.length === 0) throw versionNotFound(ref.name, version);
    await tx.query(`DELETE FROM tracker_registered_model_aliases WHERE name = $1 AND version = $2`, [ref.name, version]);
    await tx.query(`DELETE FROM tracker_model_version_tags WHERE name = $1 AND version = $2`, [ref.name, version]);
    await tx.query(`UPDATE tracker_registered_models SET last_updated_time = $2 WHERE name = $1`, [ref.name, now]);
  });
}

/** Where the version's files are: the artifact URI the client downloads from (through the proxy for ours). */
export async function getDownloadUri(deps: Deps, ref: Ref): Promise<string> {
  const version = parseVersion(ref.version);
  const rows = await deps.db.query<{ uri: string }>(
    `SELECT COALESCE(storage_location, source) AS uri FROM tracker_model_versions WHERE name = $1 AND version = $2 AND NOT deleted`,
    [ref.name, version],
  );
  if (!rows[0]) throw versionNotFound(ref.name, version);
  return rows[0].uri;
}

async function requireLiveVersion(tx: Sql, name: string, version: number): Promise<void> {
  const rows = await tx.query(`SELECT 1 FROM tracker_model_versions WHERE name = $1 AND version = $2 AND NOT deleted FOR UPDATE`, [name, version]);
  if (rows.length === 0) throw versionNotFound(name, version);
}

export async function setModelVersionTag(deps: Deps, input: Ref & Tag): Promise<void> {
  const version = parseVersion(input.version);
  checkTagKeys([input]);
  await deps.db.transaction(async (tx) => {
    await requireLiveVersion(tx, input.name, version);
    await tx.query(
      `INSERT INTO tracker_model_version_tags (name, version, key, value) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name, version, key) DO UPDATE SET value = EXCLUDED.value`,
      [input.name, version, input.key, input.value],
    );
  });
}

export async function deleteModelVersionTag(deps: Deps, input: Ref & { key: string }): Promise<void> {
  const version = parseVersion(input.version);
  await deps.db.transaction(async (tx) => {
    await requireLiveVersion(tx, input.name, version);
    await tx.query(`DELETE FROM tracker_model_version_tags WHERE name = $1 AND version = $2 AND key = $3`, [input.name, version, input.key]);
  });
}

/** The version an alias names; 'latest' is the highest live version. */
export async function getVersionByAlias(deps: Deps, input: { name: string; alias: string }): Promise<ModelVersionJson> {
  const alias = checkAlias(input.alias);
  const exists = await deps.db.query(`SELECT 1 FROM tracker_registered_models WHERE name = $1`, [input.name]);
  if (exists.length === 0) throw doesNotExist(`Registered Model with name=${input.name} not found`);
  const rows =
    alias.toLowerCase() === 'latest'
      ? await deps.db.query<{ version: number }>(`SELECT max(version) AS version FROM tracker_model_versions WHERE name = $1 AND NOT deleted`, [input.name])
      : await deps.db.query<{ version: number }>(`SELECT version FROM tracker_registered_model_aliases WHERE name = $1 AND alias = $2`, [input.name, alias]);
  const version = rows[0]?.version;
  if (version === undefined || version === null) {
    throw alias.toLowerCase() === 'latest'
      ? doesNotExist(`Latest version not found for model ${input.name}.`)
      : invalidParameter(`Registered model alias ${alias} not found.`);
  }
  return getModelVersion(deps, { name: input.name, version });
}
