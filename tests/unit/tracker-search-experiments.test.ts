import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, openPglite, type Database, type Sql } from '../../src/platform/db/index.ts';
import { TrackerError } from '../../src/tracker/errors.ts';
import { countingSql, pageThrough } from '../support/counting-sql.ts';
import { searchExperiments } from '../../src/tracker/experiments/search.ts';
import { searchLoggedModels, type LoggedModelOrder } from '../../src/tracker/logged-models/search.ts';

// search_experiments and search_logged_models on PGlite: filters, ordering and tie-breakers, view types, paging
// and one statement a page.

let db: Database;

beforeAll(async () => {
  db = await openPglite({});
  await migrate(db, 'tracker', await loadMigrations(new URL('../../src/tracker/migrations/', import.meta.url)));
  // Experiment 0 (Default) is created by the migration with creation_time = now, so it comes first by default.
  const experiments: [number, string, number, string][] = [
    [1, 'exp-a', 100, 'active'],
    [2, 'exp-b', 300, 'active'],
    [3, 'other', 300, 'active'],
    [4, 'gone', 200, 'deleted'],
  ];
  for (const [id, name, created, stage] of experiments) {
    await db.query(
      `INSERT INTO tracker_experiments (experiment_id, name, artifact_location, lifecycle_stage, creation_time, last_update_time) VALUES ($1, $2, '', $3, $4, $5)`,
      [id, name, stage, created, created + 1],
    );
  }
  await db.query(
    `INSERT INTO tracker_experiment_tags (experiment_id, key, value) VALUES (1, 'team', 'ml'), (3, 'team', 'ml'), (2, 'team', 'cv')`,
  );

  const models: [string, number, string, number, string, string, string | null][] = [
    ['m1', 1, 'model-a', 10, 'READY', 'active', 'run-1'],
    ['m2', 1, 'model-b', 20, 'PENDING', 'active', 'run-2'],
    ['m3', 1, 'model-c', 30, 'FAILED', 'active', 'run-9'],
    ['m4', 1, 'model-d', 40, 'READY', 'deleted', null],
    ['m5', 2, 'model-e', 50, 'READY', 'active', null],
  ];
  for (const [id, exp, name, created, status, stage, runId] of models) {
    await db.query(
      `INSERT INTO tracker_logged_models (model_id, experiment_id, name, artifact_location, creation_time, last_updated_time, status, lifecycle_stage, source_run_id)
       VALUES ($1, $2, $3, '', $4, $4, $5, $6, $7)`,
      [id, exp, name, created, status, stage, runId],
    );
  }
  // m1's latest acc is 0.8 (its earlier 0.5 no longer counts); m2 has acc only on dataset 'train'.
  const points: [string, number, number, string | null][] = [
    ['m1', 0.5, 1, null],
    ['m1', 0.8, 2, 'eval'],
    ['m2', 0.9, 1, 'train'],
    ['m4', 1.0, 1, null],
    ['m5', 0.7, 1, null],
  ];
  for (const [id, value, timestamp, dataset] of points) {
    await db.query(
      `INSERT INTO tracker_logged_model_metrics (model_id, key, value, timestamp, step, dataset_name) VALUES ($1, 'acc', $2, $3, 0, $4)`,
      [id, value, timestamp, dataset],
    );
  }
  await db.query(`INSERT INTO tracker_logged_model_params (model_id, key, value) VALUES ('m1', 'p', '1'), ('m2', 'p', '2')`);
  await db.query(`INSERT INTO tracker_logged_model_tags (model_id, key, value) VALUES ('m1', 't', 'xy'), ('m3', 't', 'z')`);
}, 120_000);

afterAll(async () => {
  await db?.close();
});

describe('search_experiments', () => {
  const ids = async (req: { filter?: string; orderBy?: string[]; viewType?: 'ACTIVE_ONLY' | 'DELETED_ONLY' | 'ALL' }) =>
    (await searchExperiments(db, { maxResults: 100, ...req })).experimentIds;

  it.each([
    [undefined, undefined, ['0', '2', '3', '1']],
    [undefined, ['creation_time DESC'], ['0', '3', '2', '1']],
    [undefined, ['name ASC'], ['0', '1', '2', '3']],
    [undefined, ['experiment_id DESC'], ['3', '2', '1', '0']],
    [undefined, ['last_update_time ASC', 'name DESC'], ['1', '3', '2', '0']],
    ["name LIKE 'exp-%'", undefined, ['2', '1']],
    ["attribute.name ILIKE 'EXP-A'", undefined, ['1']],
    ["name != 'Default'", undefined, ['2', '3', '1']],
    ["tags.team = 'ml'", undefined, ['3', '1']],
    ["tag.team LIKE 'c%'", undefined, ['2']],
    ['creation_time >= 300', undefined, ['0', '2', '3']],
    ["last_update_time < 200 AND tags.team = 'ml'", undefined, ['1']],
  ])('%s %j', async (filter, orderBy, expected) => {
    expect(await ids({ filter, orderBy })).toEqual(expected);
  });

  it('view types choose active, deleted or all experiments', async () => {
    expect(await ids({ viewType: 'DELETED_ONLY' })).toEqual(['4']);
    expect(await ids({ viewType: 'ALL', orderBy: ['experiment_id ASC'] })).toEqual(['0', '1', '2', '3', '4']);
  });

  it('pages without loss or duplicates, one statement a page', async () => {
    const seen = await pageThrough(db, async (sql, pageToken) => {
      const page = await searchExperiments(sql, { maxResults: 1, viewType: 'ALL', pageToken });
      return { ids: page.experimentIds, nextPageToken: page.nextPageToken };
    });
    expect(seen).toEqual(['0', '2', '3', '4', '1']);
  });
});

describe('search_logged_models', () => {
  const ids = async (req: { filter?: string; orderBy?: LoggedModelOrder[]; experimentIds?: string[] }) =>
    (await searchLoggedModels(db, { experimentIds: ['1'], maxResults: 100, ...req })).modelIds;

  it.each([
    [undefined, undefined, ['m3', 'm2', 'm1']],
    ['metrics.acc > 0.6', undefined, ['m2', 'm1']],
    ['metrics.acc < 0.6', undefined, []],
    ["name = 'model-a'", undefined, ['m1']],
    ["attributes.status = 'READY'", undefined, ['m1']],
    ["status != 'READY'", undefined, ['m3', 'm2']],
    ["source_run_id = 'run-9'", undefined, ['m3']],
    ["model_id LIKE 'm%' AND params.p = '1'", undefined, ['m1']],
    ["tags.t LIKE 'x%'", undefined, ['m1']],
    ['creation_timestamp > 15', undefined, ['m3', 'm2']],
    ['creation_time <= 20 AND metrics.acc >= 0.9', undefined, ['m2']],
    [undefined, [{ field_name: 'metrics.acc', ascending: false }], ['m2', 'm1', 'm3']],
    [undefined, [{ field_name: 'metrics.acc' }], ['m1', 'm2', 'm3']],
    [undefined, [{ field_name: 'metrics.acc', ascending: false, dataset_name: 'train' }], ['m2', 'm3', 'm1']],
    [undefined, [{ field_name: 'name', ascending: false }], ['m3', 'm2', 'm1']],
    [undefined, [{ field_name: 'creation_time', ascending: true }], ['m1', 'm2', 'm3']],
  ])('%s %j', async (filter, orderBy, expected) => {
    expect(await ids({ filter, orderBy })).toEqual(expected);
  });

  it('scopes metrics to the datasets asked for', async () => {
    const search = (filter: string | undefined, datasets: { dataset_name: string; dataset_digest?: string }[]) =>
      searchLoggedModels(db, { experimentIds: ['1'], maxResults: 10, datasets, ...(filter ? { filter } : {}) }).then((r) => r.modelIds);
    expect(await search(undefined, [{ dataset_name: 'train' }])).toEqual(['m2']);
    expect(await search(undefined, [{ dataset_name: 'train' }, { dataset_name: 'eval' }])).toEqual(['m2', 'm1']);
    expect(await search('metrics.acc > 0.6', [{ dataset_name: 'eval' }])).toEqual(['m1']);
    expect(await search(undefined, [{ dataset_name: 'train', dataset_digest: 'nope' }])).toEqual([]);
    const error = await search(undefined, [{ dataset_name: '' }]).catch((e: unknown) => e);
    expect((error as TrackerError).message).toBe('`dataset_name` in the `datasets` clause must be specified.');
  });

  it('searches several experiments and leaves deleted models out', async () => {
    expect(await ids({ experimentIds: ['1', '2'], orderBy: [{ field_name: 'metrics.acc', ascending: false }] })).toEqual([
      'm2',
      'm1',
      'm5',
      'm3',
    ]);
  });

  it('pages one statement at a time, with a token bound to its request', async () => {
    const counted = countingSql(db);
    const orderBy = [{ field_name: 'metrics.acc', ascending: false }];
    const seen: string[] = [];
    let pageToken: string | undefined;
    do {
      counted.count = 0;
      const page = await searchLoggedModels(counted, { experimentIds: ['1', '2'], orderBy, maxResults: 1, pageToken });
      expect(counted.count).toBe(1);
      seen.push(...page.modelIds);
      pageToken = page.nextPageToken;
      if (pageToken) {
        const error = await searchLoggedModels(db, { experimentIds: ['1'], orderBy, maxResults: 1, pageToken }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TrackerError);
        expect((error as TrackerError).message).toContain('Experiment IDs in the page token do not match the requested experiment IDs.');
      }
    } while (pageToken);
    expect(seen).toEqual(['m2', 'm1', 'm5', 'm3']);
  });
});
