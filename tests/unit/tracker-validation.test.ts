import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// A request message is checked once, at the edge, and refused in MLflow's words (its handlers' wording, which
// MLflow's own REST tests and clients match on): a missing field, a value of the wrong type, MLflow's limits.
describe('tracker request validation, in MLflow words', () => {
  let t: TrackerHarness;
  let runId: string;
  beforeAll(async () => {
    t = await trackerHarness();
    runId = (await t.post('runs/create', { experiment_id: '0' })).body.run.info.run_id;
  });
  afterAll(async () => t?.close());

  const post = (path: string, body: string | Record<string, unknown>) => t.post(path, body);

  it.each([
    ['experiments/create', { name: 123 }, "Invalid value 123 for parameter 'name' supplied"],
    ['experiments/create', {}, "Missing value for required parameter 'name'."],
    ['experiments/create', '{"name": "e", "artifact_location": 9.0}', "Invalid value 9.0 for parameter 'artifact_location' supplied"],
    ['experiments/create', { name: 'e', tags: '5' }, `Invalid value "5" for parameter 'tags' supplied`],
    ['runs/log-metric', { run_id: 31, key: 'k', value: 1, timestamp: 1 }, "Invalid value 31 for parameter 'run_id' supplied"],
    ['runs/log-metric', { key: 'k', value: 1, timestamp: 1 }, "Missing value for required parameter 'run_id'"],
    ['runs/set-tag', { run_id: 'RUN', key: 'k', value: 41 }, "Invalid value 41 for parameter 'value' supplied"],
    ['runs/log-batch', { run_id: 'RUN', metrics: 'foo' }, `Invalid value "foo" for parameter 'metrics' supplied`],
    ['runs/log-batch', { run_id: 'RUN', params: 'foo' }, `Invalid value "foo" for parameter 'params' supplied`],
    [
      'runs/log-batch',
      { run_id: 'RUN', metrics: [{ key: 'mae', value: 2.5 }] },
      "Missing value for required parameter 'metrics[0].timestamp'",
    ],
    [
      'runs/log-metric',
      { run_id: 'RUN', key: 'k', value: 1, timestamp: 1, step: 'foo' },
      `Invalid value "foo" for parameter 'step' supplied`,
    ],
    ['experiments/search-datasets', {}, 'SearchDatasets request must specify at least one experiment_id.'],
    ['experiments/search-datasets', { experiment_ids: [] }, 'SearchDatasets request must specify at least one experiment_id.'],
  ])('POST %s %j', async (path, body, message) => {
    const sent = typeof body === 'string' ? body : JSON.stringify(body).replaceAll('RUN', runId);
    const res = await post(path, sent);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error_code).toBe('INVALID_PARAMETER_VALUE');
    expect(res.body.message).toContain(message);
  });

  it('writes nothing when a message is refused', async () => {
    await post('runs/log-batch', { run_id: runId, params: [{ key: 'a', value: '1' }], metrics: [{ key: 'm', value: 1 }] });
    expect((await t.get('runs/get', { run_id: runId })).body.run.data.params).toBeUndefined();
  });

  it.each([
    [{ metric_key: 'key' }, "Missing value for required parameter 'run_ids'."],
    [
      { run_ids: Array.from({ length: 101 }, (_, i) => `id_${i}`), metric_key: 'key' },
      'must specify at most 100 run_ids. Received 101 run_ids.',
    ],
    [{ run_ids: ['123'], metric_key: 'key', max_results: 0 }, 'max_results must be between 1 and 2500'],
    [{ run_ids: ['123'], max_results: 5 }, "Missing value for required parameter 'metric_key'"],
    [{ run_ids: ['123'], metric_key: 'key', start_step: 1, end_step: 0 }, 'end_step must be greater than start_step. '],
    [{ run_ids: ['123'], metric_key: 'key', start_step: 1 }, 'If either start step or end step are specified, both must be specified.'],
  ])('GET metrics/get-history-bulk-interval %j', async (query, message) => {
    const res = await t.get('/ajax-api/2.0/mlflow/metrics/get-history-bulk-interval', query);
    expect(res.status, res.text).toBe(400);
    expect(res.body.message).toContain(message);
  });

  it('reads a query string as the client writes it: one value of a list, the last of a repeated scalar', async () => {
    const one = await t.get('experiments/search', { max_results: ['5', '1'] });
    expect(one.status, one.text).toBe(200);
    expect(one.body.experiments).toHaveLength(1);
    const bulk = await t.get('metrics/get-history-bulk-interval', { run_ids: runId, metric_key: 'none' });
    expect(bulk.status, bulk.text).toBe(200);
  });

  it('passes over a parameter it does not know, even one named __proto__', async () => {
    // JSON.parse makes __proto__ a key of the query, where an object literal would make it the prototype
    for (const odd of ['{"__proto__": "x", "max_results": "1"}', '{"constructor": "x", "max_results": "1"}']) {
      const res = await t.get('experiments/search', JSON.parse(odd));
      expect(res.status, res.text).toBe(200);
      expect(res.body.experiments).toHaveLength(1);
    }
  });
});
