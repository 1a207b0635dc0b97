import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, openPglite, type Database, type Sql } from '../../src/platform/db/index.ts';
import { TrackerError } from '../../src/tracker/errors.ts';
import { pageThrough } from '../support/counting-sql.ts';
import { searchModelVersions, searchRegisteredModels } from '../../src/tracker/registry/search.ts';

// search_registered_models and search_model_versions on PGlite: filters, the prompt marker MLflow 3 clients add to
// both searches, ordering with tie-breakers, deleted versions left out, paging and one statement per page.

let db: Database;
const PROMPT = 'mlflow.prompt.is_prompt';

beforeAll(async () => {
  db = await openPglite({});
  await migrate(db, 'tracker', await loadMigrations(new URL('../../src/tracker/migrations/', import.meta.url)));
  const models: [string, number, number][] = [
    ['alpha', 1, 50],
    ['beta', 2, 40],
    ['gamma', 3, 60],
    ['prompt-1', 4, 10],
    ['delta', 5, 40],
  ];
  for (const [name, created, updated] of models) {
    await db.query(`INSERT INTO tracker_registered_models (name, creation_time, last_updated_time) VALUES ($1, $2, $3)`, [
      name,
      created,
      updated,
    ]);
  }
  const modelTags: [string, string, string][] = [
    ['alpha', 'team', 'ml'],
    ['beta', 'team', 'cv'],
    ['prompt-1', PROMPT, 'true'],
    ['delta', PROMPT, 'false'],
  ];
  for (const [name, key, value] of modelTags) {
    await db.query(`INSERT INTO tracker_registered_model_tags (name, key, value) VALUES ($1, $2, $3)`, [name, key, value]);
  }
  const versions: [string, number, number, number, string | null, string, boolean][] = [
    ['alpha', 1, 10, 10, 'r1', 's3://a/1', false],
    ['alpha', 2, 20, 30, 'r2', 's3://a/2', false],
    ['alpha', 3, 21, 99, 'r3', 's3://a/3', true],
    ['beta', 1, 15, 20, 'r1', 's3://b/1', false],
    ['prompt-1', 1, 25, 5, null, 'prompt', false],
  ];
  for (const [name, version, created, updated, runId, source, deleted] of versions) {
    await db.query(
      `INSERT INTO tracker_model_versions (name, version, creation_time, last_updated_time, run_id, source, deleted) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [name, version, created, updated, runId, source, deleted],
    );
  }
  await db.query(`INSERT INTO tracker_model_version_tags (name, version, key, value) VALUES ('alpha', 1, 'stage', 'good')`);
}, 120_000);

afterAll(async () => {
  await db?.close();
});

const names = async (req: { filter?: string; orderBy?: string[]; maxResults?: number }) =>
  (await searchRegisteredModels(db, { maxResults: 100, ...req })).names;
const versions = async (req: { filter?: string; orderBy?: string[]; maxResults?: number }) =>
  (await searchModelVersions(db, { maxResults: 100, ...req })).versions.map((v) => `${v.name}/${v.version}`);

describe('search_registered_models', () => {
  it.each([
    [undefined, undefined, ['alpha', 'beta', 'delta', 'gamma', 'prompt-1']],
    [`tag.\`${PROMPT}\` != 'true'`, undefined, ['alpha', 'beta', 'delta', 'gamma']],
    [`tags.\`${PROMPT}\` = 'false'`, undefined, ['alpha', 'beta', 'delta', 'gamma']],
    [`tags.\`${PROMPT}\` = 'true'`, undefined, ['prompt-1']],
    [`name ILIKE '%A' AND tag.\`${PROMPT}\` != 'true'`, undefined, ['alpha', 'beta', 'delta', 'gamma']],
    ["name LIKE 'a%'", undefined, ['alpha']],
    ["name = 'beta'", undefined, ['beta']],
    ["attribute.name != 'beta'", undefined, ['alpha', 'delta', 'gamma', 'prompt-1']],
    ["tags.team = 'ml'", undefined, ['alpha']],
    ["tags.team != 'ml'", undefined, ['beta']],
    [undefined, ['last_updated_timestamp DESC'], ['gamma', 'alpha', 'beta', 'delta', 'prompt-1']],
    [undefined, ['last_updated_timestamp ASC', 'name DESC'], ['prompt-1', 'delta', 'beta', 'alpha', 'gamma']],
    [undefined, ['timestamp DESC'], ['delta', 'prompt-1', 'gamma', 'beta', 'alpha']],
    [undefined, ['name DESC'], ['prompt-1', 'gamma', 'delta', 'beta', 'alpha']],
  ])('%s %j', async (filter, orderBy, expected) => {
    expect(await names({ filter, orderBy })).toEqual(expected);
  });

  it('pages without loss or duplicates, one statement a page', async () => {
    const seen = await pageThrough(db, async (sql, pageToken) => {
      const page = await searchRegisteredModels(sql, { maxResults: 2, orderBy: ['last_updated_timestamp DESC'], pageToken });
      return { ids: page.names, nextPageToken: page.nextPageToken };
    });
    expect(seen).toEqual(['gamma', 'alpha', 'beta', 'delta', 'prompt-1']);
  });

  it('refuses a page token it did not make', async () => {
    const error = await searchRegisteredModels(db, { maxResults: 2, pageToken: 'e30=' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrackerError);
    expect((error as TrackerError).message).toBe('Invalid page token, parsed value={}');
  });
});

describe('search_model_versions', () => {
  it.each([
    [undefined, undefined, ['alpha/2', 'beta/1', 'alpha/1', 'prompt-1/1']],
    ["name = 'alpha'", undefined, ['alpha/2', 'alpha/1']],
    ["run_id IN ('r1', 'r3')", undefined, ['beta/1', 'alpha/1']],
    ["run_id = 'r2'", undefined, ['alpha/2']],
    ["run_id != 'r2'", undefined, ['beta/1', 'alpha/1']],
    ['version_number > 1', undefined, ['alpha/2']],
    ["version = '1' AND name = 'beta'", undefined, ['beta/1']],
    ["source_path LIKE 's3://a/%'", undefined, ['alpha/2', 'alpha/1']],
    [`tag.\`${PROMPT}\` != 'true'`, undefined, ['alpha/2', 'beta/1', 'alpha/1']],
    ["tags.stage = 'good'", undefined, ['alpha/1']],
    [undefined, ['name ASC', 'version_number ASC'], ['alpha/1', 'alpha/2', 'beta/1', 'prompt-1/1']],
    [undefined, ['name DESC'], ['prompt-1/1', 'beta/1', 'alpha/2', 'alpha/1']],
    [undefined, ['creation_timestamp ASC'], ['alpha/1', 'beta/1', 'alpha/2', 'prompt-1/1']],
  ])('%s %j', async (filter, orderBy, expected) => {
    expect(await versions({ filter, orderBy })).toEqual(expected);
  });

  it('pages without loss or duplicates, one statement a page', async () => {
    const seen = await pageThrough(db, async (sql, pageToken) => {
      const page = await searchModelVersions(sql, { maxResults: 3, pageToken });
      return { ids: page.versions.map((v) => `${v.name}/${v.version}`), nextPageToken: page.nextPageToken };
    });
    expect(seen).toEqual(['alpha/2', 'beta/1', 'alpha/1', 'prompt-1/1']);
  });
});
