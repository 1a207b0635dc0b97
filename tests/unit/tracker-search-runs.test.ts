import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, openPglite, type Database, type Sql } from '../../src/platform/db/index.ts';
import { TrackerError } from '../../src/tracker/errors.ts';
import { countingSql } from '../support/counting-sql.ts';
import { searchRuns, type SearchRunsRequest } from '../../src/tracker/runs/search.ts';

// search_runs on an in-memory PGlite with the tracker schema: filters, ordering (ties, NaN, missing values),
// view types, paging without loss or duplicates, and one statement per page whatever its size.

let db: Database;

type Run = {
  id: string;
  exp?: number;
  start: number;
  end?: number;
  name?: string;
  status?: string;
  deleted?: boolean;
  metrics?: Record<string, number>;
  params?: Record<string, string>;
  tags?: Record<string, string>;
};

const RUNS: Run[] = [
  {
    id: 'r1',
    start: 1000,
    end: 1500,
    name: 'alpha',
    status: 'FINISHED',
    metrics: { acc: 0.9, 'my metric': 3 },
    params: { lr: '0.01', depth: '3' },
    tags: { team: 'vision' },
  },
  {
    id: 'r2',
    start: 2000,
    end: 2500,
    name: 'beta',
    status: 'FAILED',
    metrics: { acc: 0.7 },
    params: { lr: '0.1' },
    tags: { team: 'vision' },
  },
  { id: 'r3', start: 3000, name: 'gamma', status: 'FINISHED', metrics: { acc: NaN }, params: { lr: '0.01' }, tags: { team: 'NLP' } },
  { id: 'r4', start: 4000, name: 'delta', status: 'RUNNING', metrics: { acc: 0.9, loss: -1 } },
  { id: 'r5', start: 5000, name: 'epsilon', status: 'FINISHED', params: { lr: '0.001' } },
  { id: 'r6', start: 6000, name: 'zeta', status: 'KILLED', metrics: { acc: 0.5, loss: Infinity }, params: { lr: '0.5' } },
  { id: 'r7', exp: 2, start: 7000, name: 'eta', metrics: { acc: 0.95 } },
  { id: 'r8', start: 8000, name: 'theta', deleted: true, metrics: { acc: 0.99 } },
];

async function insertRun(sql: Sql, run: Run) {
  await sql.query(
    `INSERT INTO tracker_runs (run_id, experiment_id, name, status, start_time, end_time, lifecycle_stage, artifact_uri)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      run.id,
      run.exp ?? 1,
      run.name ?? '',
      run.status ?? 'RUNNING',
      run.start,
      run.end ?? null,
      run.deleted ? 'deleted' : 'active',
      `mem://${run.id}`,
    ],
  );
  for (const [key, value] of Object.entries(run.metrics ?? {})) {
    const nan = Number.isNaN(value);
    await sql.query(`INSERT INTO tracker_latest_metrics (run_id, key, value, is_nan, timestamp, step) VALUES ($1, $2, $3, $4, $5, 0)`, [
      run.id,
      key,
      nan ? 0 : value,
      nan,
      run.start,
    ]);
  }
  for (const [key, value] of Object.entries(run.params ?? {})) {
    await sql.query(`INSERT INTO tracker_params (run_id, key, value) VALUES ($1, $2, $3)`, [run.id, key, value]);
  }
  for (const [key, value] of Object.entries(run.tags ?? {})) {
    await sql.query(`INSERT INTO tracker_tags (run_id, key, value) VALUES ($1, $2, $3)`, [run.id, key, value]);
  }
}

async function insertDataset(sql: Sql, runId: string, dataset: { id: string; name: string; digest: string; context?: string }) {
  await sql.query(
    `INSERT INTO tracker_datasets (dataset_id, experiment_id, name, digest, source_type, source) VALUES ($1, 1, $2, $3, 'local', 'file:///d')
     ON CONFLICT DO NOTHING`,
    [dataset.id, dataset.name, dataset.digest],
  );
  const inputId = `${runId}-${dataset.id}`;
  await sql.query(
    `INSERT INTO tracker_inputs (input_id, source_type, source_id, destination_type, destination_id) VALUES ($1, 'DATASET', $2, 'RUN_INPUT', $3)`,
    [inputId, dataset.id, runId],
  );
  if (dataset.context) {
    await sql.query(`INSERT INTO tracker_input_tags (input_id, name, value) VALUES ($1, 'mlflow.data.context', $2)`, [
      inputId,
      dataset.context,
    ]);
  }
}

beforeAll(async () => {
  db = await openPglite({});
  await migrate(db, 'tracker', await loadMigrations(new URL('../../src/tracker/migrations/', import.meta.url)));
  for (const [id, name] of [
    [1, 'exp-a'],
    [2, 'exp-b'],
    [3, 'big'],
  ] as const) {
    await db.query(
      `INSERT INTO tracker_experiments (experiment_id, name, artifact_location, creation_time, last_update_time) VALUES ($1, $2, '', 0, 0)`,
      [id, name],
    );
  }
  for (const run of RUNS) await insertRun(db, run);
  await insertDataset(db, 'r1', { id: 'ds1', name: 'train-set', digest: 'd1', context: 'training' });
  await insertDataset(db, 'r2', { id: 'ds2', name: 'eval-set', digest: 'd2', context: 'eval' });
  await insertDataset(db, 'r2', { id: 'ds1', name: 'train-set', digest: 'd1' });
  // 250 runs in experiment 3 for paging and statement counts: every fifth without the metric, many ties.
  await db.query(`INSERT INTO tracker_runs (run_id, experiment_id, start_time, artifact_uri)
    SELECT 'b' || lpad(g::text, 4, '0'), 3, 1000 + (g % 7), '' FROM generate_series(1, 250) g`);
  await db.query(`INSERT INTO tracker_latest_metrics (run_id, key, value, is_nan, timestamp, step)
    SELECT 'b' || lpad(g::text, 4, '0'), 'score', (g % 10)::float8, g % 23 = 0, 0, 0 FROM generate_series(1, 250) g WHERE g % 5 <> 0`);
}, 120_000);

afterAll(async () => {
  await db?.close();
});

const search = (req: Partial<SearchRunsRequest>) => searchRuns(db, { experimentIds: ['1'], maxResults: 100, ...req });
const ids = async (req: Partial<SearchRunsRequest>) => (await search(req)).runIds;

describe('search_runs filters', () => {
  it.each([
    ['', ['r6', 'r5', 'r4', 'r3', 'r2', 'r1']],
    ['metrics.acc > 0.6', ['r4', 'r2', 'r1']],
    ['metrics.acc >= 0.9', ['r4', 'r1']],
    ['metrics.acc = 0.9', ['r4', 'r1']],
    ['metrics.acc != 0.9', ['r6', 'r3', 'r2']],
    ['metrics.acc < 1', ['r6', 'r4', 'r2', 'r1']],
    ['metrics.loss < 0', ['r4']],
    ['metrics.loss > 1e300', ['r6']],
    ['metric.acc <= 0.5', ['r6']],
    ['metrics.`my metric` = 3', ['r1']],
    ['metrics."my metric" > 2.5', ['r1']],
    ["params.lr = '0.01'", ['r3', 'r1']],
    ['params.lr = "0.01"', ['r3', 'r1']],
    ["params.lr != '0.01'", ['r6', 'r5', 'r2']],
    ["params.lr LIKE '0.0%'", ['r5', 'r3', 'r1']],
    ["param.lr like '0._'", ['r6', 'r2']],
    ["tags.team = 'vision'", ['r2', 'r1']],
    ["tags.team ILIKE 'nlp'", ['r3']],
    ["tags.team LIKE 'nlp'", []],
    ["attributes.status = 'FINISHED'", ['r5', 'r3', 'r1']],
    ["status = 'FINISHED' AND metrics.acc >= 0.9", ['r1']],
    ["attribute.status != 'FINISHED' and params.lr = '0.1'", ['r2']],
    ["run_id IN ('r1', 'r3', 'nope')", ['r3', 'r1']],
    ["attr.run_id NOT IN ('r1', 'r3')", ['r6', 'r5', 'r4', 'r2']],
    ["run_id = 'r2'", ['r2']],
    ['attributes.start_time >= 3000 AND created < 6000', ['r5', 'r4', 'r3']],
    ['attributes.end_time > 0', ['r2', 'r1']],
    ["attributes.run_name = 'alpha'", ['r1']],
    ["run.run_name ILIKE '%ETA'", ['r6', 'r2']],
    ["`run name` = 'beta'", ['r2']],
    ["datasets.name = 'train-set'", ['r2', 'r1']],
    ["dataset.digest IN ('d2')", ['r2']],
    ["datasets.context = 'eval'", ['r2']],
    ["datasets.context LIKE 'train%'", ['r1']],
    ["datasets.name != 'train-set'", ['r2']],
    ["tags.missing = 'x'", []],
  ])('%s', async (filter, expected) => {
    expect(await ids({ filter })).toEqual(expected);
  });

  it('view types choose active, deleted or all runs', async () => {
    expect(await ids({ runViewType: 'DELETED_ONLY' })).toEqual(['r8']);
    expect(await ids({ runViewType: 'ALL', filter: 'metrics.acc > 0.95' })).toEqual(['r8']);
    expect(await ids({ runViewType: 'ACTIVE_ONLY', filter: 'metrics.acc > 0.95' })).toEqual([]);
  });

  it('searches several experiments at once, and none when given none', async () => {
    expect(await ids({ experimentIds: ['1', '2'], orderBy: ['metrics.acc DESC'], maxResults: 2 })).toEqual(['r7', 'r4']);
    expect(await ids({ experimentIds: [] })).toEqual([]);
  });
});

describe('search_runs ordering', () => {
  it.each([
    // Ties break by start_time DESC then run_id; NaN after every number, runs without the metric last.
    [['metrics.acc DESC'], ['r4', 'r1', 'r2', 'r6', 'r3', 'r5']],
    [['metrics.acc ASC'], ['r6', 'r2', 'r4', 'r1', 'r3', 'r5']],
    [['metrics.acc'], ['r6', 'r2', 'r4', 'r1', 'r3', 'r5']],
    [
      ['metrics.`acc` desc', 'attributes.start_time ASC'],
      ['r1', 'r4', 'r2', 'r6', 'r3', 'r5'],
    ],
    [['params.lr ASC'], ['r5', 'r3', 'r1', 'r2', 'r6', 'r4']],
    [['params.lr DESC'], ['r6', 'r2', 'r3', 'r1', 'r5', 'r4']],
    [
      ['tags.team DESC', 'metrics.acc ASC'],
      ['r2', 'r1', 'r3', 'r6', 'r4', 'r5'],
    ],
    [['attributes.run_name DESC'], ['r6', 'r3', 'r5', 'r4', 'r2', 'r1']],
    [
      ['status ASC', 'created DESC'],
      ['r2', 'r5', 'r3', 'r1', 'r6', 'r4'],
    ],
    [['end_time DESC'], ['r2', 'r1', 'r6', 'r5', 'r4', 'r3']],
    [['start_time ASC'], ['r1', 'r2', 'r3', 'r4', 'r5', 'r6']],
    [['metrics.loss DESC'], ['r6', 'r4', 'r5', 'r3', 'r2', 'r1']],
  ])('%j', async (orderBy, expected) => {
    expect(await ids({ orderBy })).toEqual(expected);
  });

  it('pages through every run once, in order, with any page size', async () => {
    const everything = await ids({ experimentIds: ['3'], orderBy: ['metrics.score DESC'], maxResults: 1000 });
    expect(everything).toHaveLength(250);
    for (const size of [1, 7, 50, 249, 250]) {
      const seen: string[] = [];
      let pageToken: string | undefined;
      let pages = 0;
      do {
        const result = await search({ experimentIds: ['3'], orderBy: ['metrics.score DESC'], maxResults: size, pageToken });
        seen.push(...result.runIds);
        pageToken = result.nextPageToken;
        pages += 1;
      } while (pageToken);
      expect(seen).toEqual(everything);
      expect(pages).toBe(Math.ceil(250 / size));
    }
    // Without the metric: the last 50 (every fifth run); NaN just before them.
    const withoutScore = everything.slice(200);
    expect(withoutScore.every((id) => Number(id.slice(1)) % 5 === 0)).toBe(true);
    expect(everything.slice(192, 200).every((id) => Number(id.slice(1)) % 23 === 0)).toBe(true);
  });

  it.each([
    // A filter on the metric the runs are ordered by: NaN matches only !=, a run without the metric matches nothing.
    ['metrics.acc > 0.6', 'metrics.acc DESC', ['r4', 'r1', 'r2']],
    ['metrics.acc != 0.7', 'metrics.acc DESC', ['r4', 'r1', 'r6', 'r3']],
    ['metrics.acc = 0.5', 'metrics.acc ASC', ['r6']],
    ['metrics.acc <= 0.9 and metrics.acc != 0.9', 'metrics.acc ASC', ['r6', 'r2']],
    ['metrics.acc != 0.5 and metrics.acc != 0.9', 'metrics.acc DESC', ['r2', 'r3']],
    ["metrics.acc >= 0.7 and params.lr = '0.01'", 'metrics.acc DESC', ['r1']],
    ['metrics.acc < 0', 'metrics.acc DESC', []],
  ])('filter %s ordered by %s', async (filter, orderBy, expected) => {
    expect(await ids({ filter, orderBy: [orderBy] })).toEqual(expected);
  });

  it('pages a search filtered on the metric it is ordered by as the unfiltered order, filtered', async () => {
    // Run bNNNN has score NNNN % 10, NaN when NNNN is a multiple of 23, none when a multiple of 5.
    const score = (id: string) => {
      const g = Number(id.slice(1));
      return g % 5 === 0 ? undefined : g % 23 === 0 ? Number.NaN : g % 10;
    };
    const everything = await ids({ experimentIds: ['3'], orderBy: ['metrics.score ASC'], maxResults: 1000 });
    const cases: [string, (s: number) => boolean][] = [
      ['metrics.score >= 3', (s) => s >= 3],
      ['metrics.score != 4', (s) => s !== 4],
      ['metrics.score < 2 and metrics.score != 0', (s) => s < 2 && s !== 0],
    ];
    for (const [filter, test] of cases) {
      const expected = everything.filter((id) => {
        const s = score(id);
        return s !== undefined && test(s);
      });
      expect(expected.length).toBeGreaterThan(10);
      const seen: string[] = [];
      let pageToken: string | undefined;
      do {
        const result = await search({ experimentIds: ['3'], filter, orderBy: ['metrics.score ASC'], maxResults: 7, pageToken });
        seen.push(...result.runIds);
        pageToken = result.nextPageToken;
      } while (pageToken);
      expect(seen, filter).toEqual(expected);
    }
  });

  it('costs one statement per page whatever its size', async () => {
    const counted = countingSql(db);
    for (const maxResults of [1, 10, 250]) {
      counted.count = 0;
      const result = await searchRuns(counted, {
        experimentIds: ['1', '3'],
        filter: "metrics.score >= 0 AND attributes.status = 'RUNNING'",
        orderBy: ['metrics.score DESC', 'params.lr ASC', 'tags.team DESC'],
        maxResults,
      });
      expect(result.runIds.length).toBe(Math.min(maxResults, 192));
      expect(counted.count).toBe(1);
    }
  });
});

describe('search_runs refusals', () => {
  it.each([
    [{ maxResults: 50_001 }, "Invalid value 50001 for parameter 'max_results' supplied. It must be at most 50000"],
    [{ maxResults: 0 }, 'It must be a positive integer'],
    [{ pageToken: '!!!' }, 'Invalid page token, could not base64-decode'],
    [{ pageToken: Buffer.from('not json').toString('base64') }, 'Invalid page token, decoded value=not json'],
    [{ pageToken: Buffer.from('{"offset": -3}').toString('base64') }, 'Invalid page token, parsed value='],
    [{ experimentIds: ['abc'] }, "Invalid experiment id 'abc'"],
    [{ orderBy: ['metrics.acc DESC', 'metric.acc ASC'] }, '`order_by` contains duplicate fields'],
    [{ orderBy: ['metrics.acc DOWN'] }, "Invalid ordering key in order_by clause 'metrics.acc DOWN'."],
    [{ orderBy: ['datasets.name'] }, 'cannot be ordered by dataset fields'],
    [{ orderBy: ['attributes.experiment'] }, "Invalid attribute key 'experiment' specified."],
  ])('%j', async (req, message) => {
    const error = await search(req as Partial<SearchRunsRequest>).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrackerError);
    expect((error as TrackerError).code).toBe('INVALID_PARAMETER_VALUE');
    expect((error as TrackerError).message).toContain(message);
  });
});
