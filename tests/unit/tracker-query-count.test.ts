import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';
import { recordingDatabase } from '../support/counting-sql.ts';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// runs/search loads a page of full runs (info, params, tags, latest metrics, inputs, outputs) in a fixed number of
// set-based statements: the count does not grow with the page size.
describe('tracker runs/search statement count', () => {
  let t: TrackerHarness;
  let db: ReturnType<typeof recordingDatabase>;
  let experimentId: string;

  beforeAll(async () => {
    db = recordingDatabase(await openPglite({}));
    t = await trackerHarness({ db });
    experimentId = (await t.post('experiments/create', { name: 'counted' })).body.experiment_id;
    for (let i = 0; i < 60; i++) {
      const runId = (await t.post('runs/create', { experiment_id: experimentId, run_name: `r${i}` })).body.run.info.run_id;
      await t.post('runs/log-batch', {
        run_id: runId,
        metrics: [
          { key: 'acc', value: i / 100, timestamp: 1, step: 0 },
          { key: 'loss', value: 1 - i / 100, timestamp: 1, step: 0 },
        ],
        params: [{ key: 'lr', value: String(i) }],
        tags: [{ key: 'team', value: 'ml' }],
      });
      await t.post('runs/log-inputs', {
        run_id: runId,
        datasets: [
          {
            tags: [{ key: 'mlflow.data.context', value: 'train' }],
            dataset: { name: 'd', digest: 'x', source_type: 'local', source: 's' },
          },
        ],
      });
    }
  }, 120_000);
  afterAll(async () => {
    await t.close();
  });

  async function statementsFor(maxResults: number) {
    const before = db.statements.length;
    const res = await t.post('runs/search', {
      experiment_ids: [experimentId],
      filter: "params.lr != '7' and tags.team = 'ml'",
      order_by: ['metrics.acc DESC'],
      max_results: maxResults,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.runs).toHaveLength(maxResults);
    expect(res.body.runs[0].data.params).toEqual([{ key: 'lr', value: '59' }]);
    expect(res.body.runs[0].inputs.dataset_inputs).toHaveLength(1);
    return db.statements.length - before;
  }

  it('is the same for a page of 1, 10 and 50 runs', async () => {
    const one = await statementsFor(1);
    expect(one).toBeLessThanOrEqual(8);
    expect(await statementsFor(10)).toBe(one);
    expect(await statementsFor(50)).toBe(one);
  });
});
