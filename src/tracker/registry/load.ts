import type { Sql } from '../../platform/db/index.ts';
import { doesNotExist, invalidParameter } from '../errors.ts';
import { groupBy } from '../rows.ts';
import { modelInWorkspace, requestWorkspace, workspaceIs } from '../workspaces/sql.ts';
import { STAGES, type Stage } from './validate.ts';

// Loads registry objects with everything MLflow puts in them (tags, aliases, latest version per stage), for any
// number of names or versions in a fixed number of set-based queries, in the order asked for.

export type VersionKey = { name: string; version: number };

type VersionRow = {
  name: string;
  version: number;
  creation_time: number;
  last_updated_time: number;
  description: string;
  user_id: string;
  current_stage: string;
  source: string;
  run_id: string | null;
  run_link: string;
  status: string;
  status_message: string;
  model_id: string | null;
};

type ModelRow = { name: string; creation_time: number; last_updated_time: number; description: string };
type Tag = { key: string; value: string };

export type ModelVersionJson = {
  name: string;
  version: string;
  creation_timestamp: number;
  last_updated_timestamp: number;
  user_id?: string;
  current_stage: string;
  description: string;
  source: string;
  run_id?: string;
  status: string;
  status_message?: string;
  tags: Tag[];
  run_link?: string;
  aliases: string[];
  model_id?: string;
};

export type RegisteredModelJson = {
  name: string;
  creation_timestamp: number;
  last_updated_timestamp: number;
  description: string;
  latest_versions: ModelVersionJson[];
  tags: Tag[];
  aliases: { alias: string; version: string }[];
};

const VERSION_COLUMNS = `v.name, v.version, v.creation_time, v.last_updated_time, v.description, v.user_id, v.current_stage,
  v.source, v.run_id, v.run_link, v.status, v.status_message, v.model_id`;

const keyOf = (name: string, version: number) => `${name}\u0000${version}`;

/** Live (not deleted) versions with tags and aliases, in the order of `keys`; missing ones are left out. */
export async function loadModelVersions(db: Sql, keys: readonly VersionKey[]): Promise<ModelVersionJson[]> {
  if (keys.length === 0) return [];
  const names = keys.map((k) => k.name);
  const versions = keys.map((k) => k.version);
  const pairs = `SELECT * FROM unnest($1::text[], $2::int[]) AS k(name, version)`;
  const [rows, tags, aliases] = await Promise.all([
    db.query<VersionRow>(
      `SELECT ${VERSION_COLUMNS} FROM tracker_model_versions v JOIN (${pairs}) k USING (name, version)
        WHERE NOT v.deleted AND ${modelInWorkspace('v.name', '$3')}`,
      [names, versions, requestWorkspace()],
    ),
    db.query<VersionKey & Tag>(
      `SELECT t.name, t.version, t.key, t.value FROM tracker_model_version_tags t JOIN (${pairs}) k USING (name, version) ORDER BY t.key`,
      [names, versions],
    ),
    db.query<VersionKey & { alias: string }>(
      `SELECT a.name, a.version, a.alias FROM tracker_registered_model_aliases a JOIN (${pairs}) k USING (name, version) ORDER BY a.alias`,
      [names, versions],
    ),
  ]);
  return assembleVersions(rows, tags, aliases, keys);
}

/**
 * The live versions registered from each of these runs (what MLflow's run page shows: a search on `run_id`, in its
 * default order, name ascending then newest version first), for any number of runs in a fixed number of statements.
 */
export async function versionsOfRuns(db: Sql, runIds: readonly string[]): Promise<Map<string, ModelVersionJson[]>> {
  if (runIds.length === 0) return new Map();
  const keys = await db.query<VersionKey>(
    `SELECT name, version FROM tracker_model_versions WHERE run_id = ANY($1::text[]) AND NOT deleted ORDER BY name ASC, version DESC`,
    [[...runIds]],
  );
  const versions = await loadModelVersions(
    db,
    keys.map((k) => ({ name: k.name, version: Number(k.version) })),
  );
  return groupBy(versions, (v) => v.run_id ?? '');
}

/** Registered models with tags, aliases and the latest live version of each stage, in the order of `names`. */
export async function loadRegisteredModels(db: Sql, names: readonly string[]): Promise<RegisteredModelJson[]> {
  if (names.length === 0) return [];
  const list = [...names];
  const [models, tags, aliases, latest] = await Promise.all([
    db.query<ModelRow>(
      `SELECT name, creation_time, last_updated_time, description FROM tracker_registered_models
        WHERE name = ANY($1::text[]) AND ${workspaceIs('workspace', '$2')}`,
      [list, requestWorkspace()],
    ),
    db.query<{ name: string } & Tag>(
      `SELECT name, key, value FROM tracker_registered_model_tags WHERE name = ANY($1::text[]) ORDER BY key`,
      [list],
    ),
    db.query<{ name: string; alias: string; version: number }>(
      `SELECT name, alias, version FROM tracker_registered_model_aliases WHERE name = ANY($1::text[]) ORDER BY alias`,
      [list],
    ),
    db.query<VersionRow>(
      `SELECT DISTINCT ON (v.name, v.current_stage) ${VERSION_COLUMNS}
         FROM tracker_model_versions v WHERE v.name = ANY($1::text[]) AND NOT v.deleted
        ORDER BY v.name, v.current_stage, v.version DESC`,
      [list],
    ),
  ]);
  // The latest versions' own tags: one more query for all of them.
  const latestKeys = latest.map((v) => ({ name: v.name, version: v.version }));
  const latestTags = latestKeys.length
    ? await db.query<VersionKey & Tag>(
        `SELECT t.name, t.version, t.key, t.value FROM tracker_model_version_tags t
           JOIN unnest($1::text[], $2::int[]) AS k(name, version) USING (name, version) ORDER BY t.key`,
        [latestKeys.map((k) => k.name), latestKeys.map((k) => k.version)],
      )
    : [];
  const versionAliases = aliases.map((a) => ({ name: a.name, version: a.version, alias: a.alias }));
  const latestJson = assembleVersions(latest, latestTags, versionAliases, null);

  const byName = new Map(models.map((m) => [m.name, m]));
  const latestOf = groupBy(latestJson, (v) => v.name);
  const tagsOf = groupBy(tags, (t) => t.name);
  const aliasesOf = groupBy(aliases, (a) => a.name);
  const out: RegisteredModelJson[] = [];
  for (const name of names) {
    const m = byName.get(name);
    if (!m) continue;
    out.push({
      name: m.name,
      creation_timestamp: m.creation_time,
      last_updated_timestamp: m.last_updated_time,
      description: m.description,
      latest_versions: (latestOf.get(name) ?? []).sort((a, b) => Number(a.version) - Number(b.version)),
      tags: (tagsOf.get(name) ?? []).map(({ key, value }) => ({ key, value })),
      aliases: (aliasesOf.get(name) ?? []).map((a) => ({ alias: a.alias, version: String(a.version) })),
    });
  }
  return out;
}

function assembleVersions(
  rows: VersionRow[],
  tags: (VersionKey & Tag)[],
  aliases: (VersionKey & { alias: string })[],
  order: readonly VersionKey[] | null,
): ModelVersionJson[] {
  const tagsOf = groupBy(tags, (t) => keyOf(t.name, t.version));
  const aliasesOf = groupBy(aliases, (a) => keyOf(a.name, a.version));
  const json = new Map(
    rows.map((r) => [
      keyOf(r.name, r.version),
      toVersionJson(r, tagsOf.get(keyOf(r.name, r.version)) ?? [], aliasesOf.get(keyOf(r.name, r.version)) ?? []),
    ]),
  );
  if (!order) return [...json.values()];
  const out: ModelVersionJson[] = [];
  for (const k of order) {
    const v = json.get(keyOf(k.name, k.version));
    if (v) out.push(v);
  }
  return out;
}

function toVersionJson(r: VersionRow, tags: Tag[], aliases: { alias: string }[]): ModelVersionJson {
  return {
    name: r.name,
    version: String(r.version),
    creation_timestamp: r.creation_time,
    last_updated_timestamp: r.last_updated_time,
    ...(r.user_id ? { user_id: r.user_id } : {}),
    current_stage: r.current_stage,
    description: r.description,
    source: r.source,
    ...(r.run_id ? { run_id: r.run_id } : {}),
    status: r.status,
    ...(r.status_message ? { status_message: r.status_message } : {}),
    tags: tags.map(({ key, value }) => ({ key, value })),
    ...(r.run_link ? { run_link: r.run_link } : {}),
    aliases: aliases.map((a) => a.alias),
    ...(r.model_id ? { model_id: r.model_id } : {}),
  };
}

export const registeredModelNotFound = (name: string) => doesNotExist(`Registered Model with name=${name} not found`);
export const versionNotFound = (name: string, version: number) =>
  doesNotExist(`Model Version (name=${name}, version=${version}) not found`);

export async function getRegisteredModel(db: Sql, name: string): Promise<RegisteredModelJson> {
  const [model] = await loadRegisteredModels(db, [name]);
  if (!model) throw registeredModelNotFound(name);
  return model;
}

export async function getModelVersion(db: Sql, ref: VersionKey): Promise<ModelVersionJson> {
  const [found] = await loadModelVersions(db, [ref]);
  if (!found) throw versionNotFound(ref.name, ref.version);
  return found;
}

/** The latest live version of each requested stage (every stage when none is named), lowest version first. */
export async function getLatestVersions(db: Sql, input: { name: string; stages: Stage[] }): Promise<ModelVersionJson[]> {
  const stages = input.stages.length ? input.stages : [...STAGES];
  const exists = await db.query(`SELECT 1 FROM tracker_registered_models WHERE name = $1 AND ${workspaceIs('workspace', '$2')}`, [
    input.name,
    requestWorkspace(),
  ]);
  if (exists.length === 0) throw registeredModelNotFound(input.name);
  const keys = await db.query<VersionKey>(
    `SELECT DISTINCT ON (current_stage) name, version FROM tracker_model_versions
      WHERE name = $1 AND NOT deleted AND current_stage = ANY($2::text[])
      ORDER BY current_stage, version DESC`,
    [input.name, stages],
  );
  keys.sort((a, b) => a.version - b.version);
  return loadModelVersions(db, keys);
}

/** The version an alias names; 'latest' is the highest live version. */
export async function getVersionByAlias(db: Sql, input: { name: string; alias: string }): Promise<ModelVersionJson> {
  const { name, alias } = input;
  const exists = await db.query(`SELECT 1 FROM tracker_registered_models WHERE name = $1 AND ${workspaceIs('workspace', '$2')}`, [
    name,
    requestWorkspace(),
  ]);
  if (exists.length === 0) throw registeredModelNotFound(name);
  const latest = alias.toLowerCase() === 'latest';
  const rows = latest
    ? await db.query<{ version: number }>(`SELECT max(version) AS version FROM tracker_model_versions WHERE name = $1 AND NOT deleted`, [
        name,
      ])
    : await db.query<{ version: number }>(`SELECT version FROM tracker_registered_model_aliases WHERE name = $1 AND alias = $2`, [
        name,
        alias,
      ]);
  const version = rows[0]?.version;
  if (version === undefined || version === null) {
    throw latest
      ? doesNotExist(`Latest version not found for model ${name}.`)
      : invalidParameter(`Registered model alias ${alias} not found.`);
  }
  return getModelVersion(db, { name, version });
}

/** Where the version's files are: the artifact URI the client downloads from (through the proxy for ours). */
export async function getDownloadUri(db: Sql, ref: VersionKey): Promise<string> {
  const rows = await db.query<{ uri: string }>(
    `SELECT COALESCE(storage_location, source) AS uri FROM tracker_model_versions
      WHERE name = $1 AND version = $2 AND NOT deleted AND ${modelInWorkspace('name', '$3')}`,
    [ref.name, ref.version, requestWorkspace()],
  );
  if (!rows[0]) throw versionNotFound(ref.name, ref.version);
  return rows[0].uri;
}
