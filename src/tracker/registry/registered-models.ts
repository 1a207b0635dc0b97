import { isUniqueViolation, type Database, type Sql } from '../../platform/db/index.ts';
import { alreadyExists } from '../errors.ts';
import { writeKeyValues } from '../rows.ts';
import type { KeyValue } from '../wire/fields.ts';
import { requestWorkspace, workspaceIs } from '../workspaces/sql.ts';
import { getRegisteredModel, registeredModelNotFound, versionNotFound, type RegisteredModelJson } from './load.ts';

// Registered model writes. Values arrive checked (messages.ts); the row lock orders writers of one model. A write
// answers the model as it committed it (read in its own transaction).

type Deps = { db: Database; now(): number };

/** Locks the registered model row for the rest of the transaction (version numbering, stage moves); 404 if absent. */
export async function lockRegisteredModel(tx: Sql, name: string): Promise<void> {
  const rows = await tx.query(`SELECT 1 FROM tracker_registered_models WHERE name = $1 AND ${workspaceIs('workspace', '$2')} FOR UPDATE`, [
    name,
    requestWorkspace(),
  ]);
  if (rows.length === 0) throw registeredModelNotFound(name);
}

export async function createRegisteredModel(
  deps: Deps,
  input: { name: string; tags: KeyValue[]; description: string },
): Promise<RegisteredModelJson> {
  const now = deps.now();
  try {
    return await deps.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO tracker_registered_models (name, creation_time, last_updated_time, description, workspace)
         VALUES ($1, $2, $2, $3, $4)`,
        [input.name, now, input.description, requestWorkspace()],
      );
      await writeKeyValues(tx, 'registeredModelTags', [input.name], input.tags);
      return getRegisteredModel(tx, input.name);
    });
  } catch (err) {
    // The client's register_model relies on exactly this code to go on and create the version.
    if (isUniqueViolation(err)) throw alreadyExists(`Registered Model (name=${input.name}) already exists.`);
    throw err;
  }
}

export async function updateRegisteredModel(
  deps: Deps,
  input: { name: string; description?: string | undefined },
): Promise<RegisteredModelJson> {
  return deps.db.transaction(async (tx) => {
    const rows = await tx.query(
      `UPDATE tracker_registered_models SET description = COALESCE($2, description), last_updated_time = $3
        WHERE name = $1 AND ${workspaceIs('workspace', '$4')} RETURNING name`,
      [input.name, input.description ?? null, deps.now(), requestWorkspace()],
    );
    if (rows.length === 0) throw registeredModelNotFound(input.name);
    return getRegisteredModel(tx, input.name);
  });
}

/** Versions, tags and aliases follow the name (ON UPDATE CASCADE in the schema). */
export async function renameRegisteredModel(deps: Deps, input: { name: string; newName: string }): Promise<RegisteredModelJson> {
  try {
    return await deps.db.transaction(async (tx) => {
      await lockRegisteredModel(tx, input.name);
      const now = deps.now();
      await tx.query(`UPDATE tracker_registered_models SET name = $2, last_updated_time = $3 WHERE name = $1`, [
        input.name,
        input.newName,
        now,
      ]);
      await tx.query(`UPDATE tracker_model_versions SET last_updated_time = $2 WHERE name = $1`, [input.newName, now]);
      return getRegisteredModel(tx, input.newName);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw alreadyExists(`Registered Model (name=${input.newName}) already exists.`);
    throw err;
  }
}

export async function deleteRegisteredModel(deps: Deps, name: string): Promise<void> {
  const rows = await deps.db.query(
    `DELETE FROM tracker_registered_models WHERE name = $1 AND ${workspaceIs('workspace', '$2')} RETURNING name`,
    [name, requestWorkspace()],
  );
  if (rows.length === 0) throw registeredModelNotFound(name);
}

export async function setRegisteredModelTag(deps: Deps, input: { name: string } & KeyValue): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, input.name);
    await writeKeyValues(tx, 'registeredModelTags', [input.name], [input]);
  });
}

export async function deleteRegisteredModelTag(deps: Deps, input: { name: string; key: string }): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, input.name);
    await tx.query(`DELETE FROM tracker_registered_model_tags WHERE name = $1 AND key = $2`, [input.name, input.key]);
  });
}

export async function setAlias(deps: Deps, input: { name: string; alias: string; version: number }): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, input.name);
    const live = await tx.query(`SELECT 1 FROM tracker_model_versions WHERE name = $1 AND version = $2 AND NOT deleted`, [
      input.name,
      input.version,
    ]);
    if (live.length === 0) throw versionNotFound(input.name, input.version);
    await tx.query(
      `INSERT INTO tracker_registered_model_aliases (name, alias, version) VALUES ($1, $2, $3)
       ON CONFLICT (name, alias) DO UPDATE SET version = EXCLUDED.version`,
      [input.name, input.alias, input.version],
    );
  });
}

export async function deleteAlias(deps: Deps, input: { name: string; alias: string }): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, input.name);
    await tx.query(`DELETE FROM tracker_registered_model_aliases WHERE name = $1 AND alias = $2`, [input.name, input.alias]);
  });
}
