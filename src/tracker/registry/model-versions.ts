import type { Database, Sql } from '../../platform/db/index.ts';
import { noteRegisteredVersion } from '../logged-models/store.ts';
import { writeKeyValues } from '../rows.ts';
import type { KeyValue } from '../wire/fields.ts';
import { getModelVersion, versionNotFound, type ModelVersionJson, type VersionKey } from './load.ts';
import { lockRegisteredModel } from './registered-models.ts';
import { resolveSource } from './source.ts';
import { modelInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import type { Stage } from './validate.ts';

// Model version writes. Values arrive checked (messages.ts); the registered model's row lock orders writers. A
// write answers the version as it committed it (read in its own transaction, so a concurrent write cannot show).

type Deps = { db: Database; now(): number };

/**
 * Numbers versions 1, 2, ... per name. The registered model row is locked first, so concurrent creates for one
 * name queue behind each other and each reads the maximum the previous one wrote (deleted versions keep their
 * numbers, as in MLflow). The new version's number.
 */
export async function createModelVersion(
  deps: Deps,
  input: {
    name: string;
    source: string;
    runId: string | undefined;
    modelId: string | undefined;
    runLink: string;
    description: string;
    tags: KeyValue[];
    /** The signed-in user who registers it (SVC_AUTH_MODE=jwt); empty for a call without identity, as MLflow. */
    userId?: string | undefined;
  },
): Promise<ModelVersionJson> {
  const resolved = await resolveSource(deps.db, { source: input.source, runId: input.runId, modelId: input.modelId });
  return deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, input.name);
    const now = deps.now();
    const [row] = await tx.query<{ version: number }>(
      `INSERT INTO tracker_model_versions
         (name, version, creation_time, last_updated_time, description, source, run_id, run_link, storage_location, model_id, user_id)
       SELECT $1, COALESCE(max(version), 0) + 1, $2, $2, $3, $4, $5, $6, $7, $8, $9 FROM tracker_model_versions WHERE name = $1
       RETURNING version`,
      [
        input.name,
        now,
        input.description,
        resolved.source,
        resolved.runId,
        input.runLink,
        resolved.storageLocation,
        resolved.modelId,
        input.userId ?? '',
      ],
    );
    const version = row!.version;
    await tx.query(`UPDATE tracker_registered_models SET last_updated_time = $2 WHERE name = $1`, [input.name, now]);
    await writeKeyValues(tx, 'modelVersionTags', [input.name, version], input.tags);
    if (resolved.modelId) await noteRegisteredVersion(tx, resolved.modelId, { name: input.name, version }, now);
    return getModelVersion(tx, { name: input.name, version });
  });
}

export async function updateModelVersion(deps: Deps, input: VersionKey & { description?: string | undefined }): Promise<ModelVersionJson> {
  return deps.db.transaction(async (tx) => {
    const rows = await tx.query(
      `UPDATE tracker_model_versions SET description = COALESCE($3, description), last_updated_time = $4
        WHERE name = $1 AND version = $2 AND NOT deleted AND ${modelInWorkspace('name', '$5')} RETURNING version`,
      [input.name, input.version, input.description ?? null, deps.now(), requestWorkspace()],
    );
    if (rows.length === 0) throw versionNotFound(input.name, input.version);
    return getModelVersion(tx, input);
  });
}

/**
 * Moves a version to a stage. With archive_existing_versions (checked to be Staging or Production) the other
 * versions in that stage move to Archived in the same transaction.
 */
export async function transitionStage(
  deps: Deps,
  input: VersionKey & { stage: Stage; archiveExistingVersions: boolean },
): Promise<ModelVersionJson> {
  const { name, version, stage } = input;
  return deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, name);
    const now = deps.now();
    const rows = await tx.query(
      `UPDATE tracker_model_versions SET current_stage = $3, last_updated_time = $4 WHERE name = $1 AND version = $2 AND NOT deleted RETURNING version`,
      [name, version, stage, now],
    );
    if (rows.length === 0) throw versionNotFound(name, version);
    if (input.archiveExistingVersions) {
      await tx.query(
        `UPDATE tracker_model_versions SET current_stage = 'Archived', last_updated_time = $4
          WHERE name = $1 AND version <> $2 AND current_stage = $3 AND NOT deleted`,
        [name, version, stage, now],
      );
    }
    await tx.query(`UPDATE tracker_registered_models SET last_updated_time = $2 WHERE name = $1`, [name, now]);
    return getModelVersion(tx, { name, version });
  });
}

/**
 * Deletes a version as MLflow does: the row stays (so its number is never reused) with its source and run
 * redacted; its aliases go.
 */
export async function deleteModelVersion(deps: Deps, ref: VersionKey): Promise<void> {
  const { name, version } = ref;
  await deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, name).catch(() => {
      throw versionNotFound(name, version);
    });
    const now = deps.now();
    const rows = await tx.query(
      `UPDATE tracker_model_versions
          SET deleted = true, last_updated_time = $3, description = '', user_id = '', source = 'REDACTED-SOURCE-PATH',
              run_id = 'REDACTED-RUN-ID', run_link = 'REDACTED-RUN-LINK', status_message = '', storage_location = NULL
        WHERE name = $1 AND version = $2 AND NOT deleted RETURNING version`,
      [name, version, now],
    );
    if (rows.length === 0) throw versionNotFound(name, version);
    await tx.query(`DELETE FROM tracker_registered_model_aliases WHERE name = $1 AND version = $2`, [name, version]);
    await tx.query(`DELETE FROM tracker_model_version_tags WHERE name = $1 AND version = $2`, [name, version]);
    await tx.query(`UPDATE tracker_registered_models SET last_updated_time = $2 WHERE name = $1`, [name, now]);
  });
}

async function requireLiveVersion(tx: Sql, name: string, version: number): Promise<void> {
  const rows = await tx.query(
    `SELECT 1 FROM tracker_model_versions WHERE name = $1 AND version = $2 AND NOT deleted AND ${modelInWorkspace('name', '$3')} FOR UPDATE`,
    [name, version, requestWorkspace()],
  );
  if (rows.length === 0) throw versionNotFound(name, version);
}

export async function setModelVersionTag(deps: Deps, input: VersionKey & KeyValue): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await requireLiveVersion(tx, input.name, input.version);
    await writeKeyValues(tx, 'modelVersionTags', [input.name, input.version], [input]);
  });
}

export async function deleteModelVersionTag(deps: Deps, input: VersionKey & { key: string }): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await requireLiveVersion(tx, input.name, input.version);
    await tx.query(`DELETE FROM tracker_model_version_tags WHERE name = $1 AND version = $2 AND key = $3`, [
      input.name,
      input.version,
      input.key,
    ]);
  });
}
