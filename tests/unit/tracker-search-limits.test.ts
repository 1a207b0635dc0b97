import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// Search filters are bounded (issue 31, finding 5): every search that parses a filter refuses more than 100
// conditions with INVALID_PARAMETER_VALUE naming the limit, and a filter at the limit answers, with the right rows,
// since the tests on one table of child rows (a run's metrics, params or tags...) are one scan, not one join each.

let t: TrackerHarness;
let exp: string;
const v3 = (path: string) => `/api/3.0/mlflow/${path}`;
const and = (clauses: string[]) => clauses.join(' AND ');
const times = <T>(n: number, item: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => item(i));

beforeAll(async () => {
  t = await trackerHarness();
  exp = (await t.post('experiments/create', { name: 'limits' })).body.experiment_id;
}, 60_000);
afterAll(() => t.close());

const location = () => [{ type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: exp } }];

// Each search with a filter, as its client calls it.
const SEARCHES: [string, (filter: string) => Promise<{ status: number; body: any }>][] = [
  ['runs/search', (filter) => t.post('runs/search', { experiment_ids: [exp], filter })],
  ['experiments/search', (filter) => t.post('experiments/search', { filter, max_results: 10 })],
  ['registered-models/search', (filter) => t.get('registered-models/search', { filter })],
  ['model-versions/search', (filter) => t.get('model-versions/search', { filter })],
  ['logged-models/search', (filter) => t.post('logged-models/search', { experiment_ids: [exp], filter })],
  ['traces/search (v3)', (filter) => t.post(v3('traces/search'), { locations: location(), filter })],
  ['datasets/search', (filter) => t.post(v3('datasets/search'), { experiment_ids: [exp], filter_string: filter })],
];

describe.each(SEARCHES)('%s', (_name, search) => {
  it.each([101, 500])('refuses a filter of %i conditions, naming the limit', async (n) => {
    const res = await search(and(times(n, (i) => `tags.t${i} = 'x'`)));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error_code: 'INVALID_PARAMETER_VALUE',
      message: expect.stringContaining('more than 100 conditions joined with AND (at most 100 are allowed)'),
    });
  });

  it('takes 100 conditions', async () => {
    const res = await search(and(times(100, (i) => `tags.t${i} = 'x'`)));
    expect(res.status).toBe(200);
  });
});

describe('a filter at the limit finds what it names', () => {
  it('runs: 100 conditions over metrics, params, tags and attributes', async () => {
    const keys = times(25, (i) => `k${i}`);
    const makeRun = async (name: string, spoil?: string) => {
      const run = (await t.post('runs/create', { experiment_id: exp, run_name: name })).body.run.info.run_id;
      const batch = await t.post('runs/log-batch', {
        run_id: run,
        metrics: keys.map((k) => ({ key: k, value: k === spoil ? -1 : 1, timestamp: 1 })),
        params: keys.map((k) => ({ key: k, value: 'a' })),
        tags: keys.map((k) => ({ key: k, value: 'b' })),
      });
      expect(batch.status).toBe(200);
      return run;
    };
    const match = await makeRun('match');
    await makeRun('spoiled', 'k24');
    const filter = and([
      ...keys.map((k) => `metrics.${k} > 0`),
      ...keys.map((k) => `params.${k} = 'a'`),
      ...keys.map((k) => `tags.${k} LIKE 'b%'`),
      ...times(25, (i) => `attributes.start_time >= ${i}`),
    ]);
    const res = await t.post('runs/search', { experiment_ids: [exp], filter });
    expect(res.status).toBe(200);
    expect(res.body.runs.map((r: { info: { run_id: string } }) => r.info.run_id)).toEqual([match]);
  });

  it('experiments: 100 tag conditions', async () => {
    const tags = times(100, (i) => ({ key: `t${i}`, value: 'x' }));
    const match = (await t.post('experiments/create', { name: 'tagged', tags })).body.experiment_id;
    await t.post('experiments/create', { name: 'almost', tags: tags.map((x, i) => (i === 99 ? { ...x, value: 'y' } : x)) });
    const res = await t.post('experiments/search', { filter: and(tags.map((x) => `tags.${x.key} = 'x'`)) });
    expect(res.status).toBe(200);
    expect(res.body.experiments.map((e: { experiment_id: string }) => e.experiment_id)).toEqual([match]);
  });

  it('logged models: 100 conditions over metrics, params and tags', async () => {
    const other = (await t.post('experiments/create', { name: 'models' })).body.experiment_id;
    const keys = times(34, (i) => `k${i}`);
    const makeModel = async (spoil?: string) => {
      const model = (
        await t.post('logged-models', {
          experiment_id: other,
          name: 'm',
          params: keys.map((k) => ({ key: k, value: 'a' })),
          tags: keys.map((k) => ({ key: k, value: 'b' })),
        })
      ).body.model.info.model_id;
      const run = (await t.post('runs/create', { experiment_id: other })).body.run.info.run_id;
      const logged = await t.post('runs/log-batch', {
        run_id: run,
        metrics: keys.map((k) => ({ key: k, value: k === spoil ? 0 : 1, timestamp: 1, model_id: model })),
      });
      expect(logged.status).toBe(200);
      return model;
    };
    const match = await makeModel();
    await makeModel('k0');
    const filter = and([
      ...keys.map((k) => `metrics.${k} > 0.5`),
      ...keys.map((k) => `params.${k} = 'a'`),
      ...keys.slice(0, 32).map((k) => `tags.${k} = 'b'`),
    ]);
    const res = await t.post('logged-models/search', { experiment_ids: [other], filter });
    expect(res.status).toBe(200);
    expect(res.body.models.map((m: { info: { model_id: string } }) => m.info.model_id)).toEqual([match]);
  });

  it('traces: 100 conditions over tags and metadata', async () => {
    const other = (await t.post('experiments/create', { name: 'traces' })).body.experiment_id;
    const keys = times(50, (i) => `k${i}`);
    for (const [id, value] of [
      ['tr-match', 'v'],
      ['tr-spoiled', 'w'],
    ] as const) {
      const res = await t.post(v3('traces'), {
        trace: {
          trace_info: {
            trace_id: id,
            trace_location: { type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: other } },
            request_time: new Date(1000).toISOString(),
            state: 'OK',
            tags: Object.fromEntries(keys.map((k) => [k, 'v'])),
            trace_metadata: Object.fromEntries(keys.map((k, i) => [k, i === 49 ? value : 'v'])),
          },
        },
      });
      expect(res.status).toBe(200);
    }
    const filter = and([...keys.map((k) => `tags.${k} = 'v'`), ...keys.map((k) => `metadata.${k} = 'v'`)]);
    const res = await t.post(v3('traces/search'), {
      locations: [{ type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: other } }],
      filter,
    });
    expect(res.status).toBe(200);
    expect(res.body.traces.map((x: { trace_id: string }) => x.trace_id)).toEqual(['tr-match']);
  });
});
