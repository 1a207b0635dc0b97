import { isUniqueViolation, type Sql } from '../../platform/db/index.ts';
import type { TrackerDeps } from '../deps.ts';
import { alreadyExists, doesNotExist } from '../errors.ts';
import { loadModelVersions, loadRegisteredModels, type ModelVersionJson, type RegisteredModelJson } from './load.ts';
import { canonicalStage, checkAlias, checkModelName, checkSettableAlias, checkTagKeys, parseVersion, STAGES } from './validate.ts';

type Deps = Pick<TrackerDeps, 'db' | 'now'>;
type Tag = { key: string; value: string };

const notFound = (name: string) => doesNotExist(`Registered Model with name=${name} not found`);

/** Locks the registered model row for the rest of the transaction (version numbering, stage moves); 404 if absent. */
export async function lockRegisteredModel(tx: Sql, name: string): Promise<void> {
  const rows = await tx.query(`SELECT 1 FROM tracker_registered_models WHERE name = $1 FOR UPDATE`, [name]);
  if (rows.length === 0) throw notFound(name);
}

export async function getRegisteredModel(deps: Deps, name: string, db: Sql = deps.db): Promise<RegisteredModelJson> {
  const [model] = await loadRegisteredModels(db, [name]);
  if (!model) throw notFound(name);
  return model;
}

export async function createRegisteredModel(
  deps: Deps,
  input: { name: string; tags: Tag[]; description?: string | undefined },
): Promise<RegisteredModelJson> {
  const name = checkModelName(input.name);
  const now = deps.now();
  try {
    return await deps.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO tracker_registered_models (name, creation_time, last_updated_time, description) VALUES ($1, $2, $2, $3)`,
        [name, now, input.description ?? ''],
      );
      await upsertTags(tx, name, input.tags);
      return getRegisteredModel(deps, name, tx);
    });
  } catch (err) {
    // The client's register_model relies on exactly this code to go on and create the version.
    if (isUniqueViolation(err)) throw alreadyExists(`Registered Model (name=${name}) already exists.`);
    throw err;
  }
}

async function upsertTags(tx: Sql, name: string, tags: Tag[]): Promise<void> {
  checkTagKeys(tags);
  if (tags.length === 0) return;
  // The last value of a repeated key wins, as in MLflow.
  const last = new Map(tags.map((t) => [t.key, t.value]));
  await tx.query(
    `INSERT INTO tracker_registered_model_tags (name, key, value)
     SELECT $1, k, v FROM unnest($2::text[], $3::text[]) AS t(k, v)
     ON CONFLICT (name, key) DO UPDATE SET value = EXCLUDED.value`,
    [name, [...last.keys()], [...last.values()]],
  );
}

export async function updateRegisteredModel(deps: Deps, input: { name: string; description?: string | undefined }): Promise<RegisteredModelJson> {
  return deps.db.transaction(async (tx) => {
    const rows = await tx.query(
      `UPDATE tracker_registered_models SET description = COALESCE($2, description), last_updated_time = $3 WHERE name = $1 RETURNING name`,
      [input.name, input.description ?? null, deps.now()],
    );
    if (rows.length === 0) throw notFound(input.name);
    return getRegisteredModel(deps, input.name, tx);
  });
}

/** Versions, tags and aliases follow the name (ON UPDATE CASCADE in the schema). */
export async function renameRegisteredModel(deps: Deps, input: { name: string; newName: string }): Promise<RegisteredModelJson> {
  const newName = checkModelName(input.newName, 'new_name');
  try {
    return await deps.db.transaction(async (tx) => {
      await lockRegisteredModel(tx, input.name);
      const now = deps.now();
      await tx.query(`UPDATE tracker_registered_models SET name = $2, last_updated_time = $3 WHERE name = $1`, [input.name, newName, now]);
      await tx.query(`UPDATE tracker_model_versions SET last_updated_time = $2 WHERE name = $1`, [newName, now]);
      return getRegisteredModel(deps, newName, tx);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw alreadyExists(`Registered Model (name=${newName}) already exists.`);
    throw err;
  }
}

export async function deleteRegisteredModel(deps: Deps, name: string): Promise<void> {
  const rows = await deps.db.query(`DELETE FROM tracker_registered_models WHERE name = $1 RETURNING name`, [name]);
  if (rows.length === 0) throw notFound(name);
}

export async function setRegisteredModelTag(deps: Deps, input: { name: string; key: string; value: string }): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, input.name);
    await upsertTags(tx, input.name, [{ key: input.key, value: input.value }]);
  });
}

export async function deleteRegisteredModelTag(deps: Deps, input: { name: string; key: string }): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, input.name);
    await tx.query(`DELETE FROM tracker_registered_model_tags WHERE name = $1 AND key = $2`, [input.name, input.key]);
  });
}

/** The latest live version of each requested stage (every stage when none is named), lowest version first. */
export async function getLatestVersions(deps: Deps, input: { name: string; stages: string[] }): Promise<ModelVersionJson[]> {
  const stages = input.stages.length ? [...new Set(input.stages.map(canonicalStage))] : [...STAGES];
  const exists = await deps.db.query(`SELECT 1 FROM tracker_registered_models WHERE name = $1`, [input.name]);
  if (exists.length === 0) throw notFound(input.name);
  const keys = await deps.db.query<{ name: string; version: number }>(
    `SELECT DISTINCT ON (current_stage) name, version FROM tracker_model_versions
      WHERE name = $1 AND NOT deleted AND current_stage = ANY($2::text[])
      ORDER BY current_stage, version DESC`,
    [input.name, stages],
  );
  keys.sort((a, b) => a.version - b.version);
  return loadModelVersions(deps.db, keys);
}

export async function setAlias(deps: Deps, input: { name: string; alias: string; version: string | number }): Promise<void> {
  const alias = checkSettableAlias(input.alias);
  const version = parseVersion(input.version);
  await deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, input.name);
    const live = await tx.query(`SELECT 1 FROM tracker_model_versions WHERE name = $1 AND version = $2 AND NOT deleted`, [input.name, version]);
    if (live.length === 0) throw doesNotExist(`Model Version (name=${input.name}, version=${version}) not found`);
    await tx.query(
      `INSERT INTO tracker_registered_model_aliases (name, alias, version) VALUES ($1, $2, $3)
       ON CONFLICT (name, alias) DO UPDATE SET version = EXCLUDED.version`,
      [input.name, alias, version],
    );
  });
}

export async function deleteAlias(deps: Deps, input: { name: string; alias: string }): Promise<void> {
  const alias = checkAlias(input.alias);
  await deps.db.transaction(async (tx) => {
    await lockRegisteredModel(tx, input.name);
    await tx.query(`DELETE FROM tracker_registered_model_aliases WHERE name = $1 AND alias = $2`, [input.name, alias]);
  });
}
