import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upgradeTrackerSchema } from '../../src/tracker/schema-gate.ts';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// Each run's answer is kept as JSON (tracker_runs.run_json, migration 011) and rebuilt by every write to the run.
// After each kind of write, runs/search and runs/get must show it, and must answer byte for byte what the run's
// rows give when the JSON is built from them (the stored text cleared, so the read builds it).
describe('stored run JSON', () => {
  let t: TrackerHarness;
  let exp: string;
  beforeAll(async () => {
    t = await trackerHarness();
    exp = (await t.post('experiments/create', { name: 'stored-json' })).body.experiment_id;
  });
  afterAll(() => t?.close());

  const ok = async (res: Promise<{ status: number; text: string; body: any }>) => {
    const r = await res;
    expect(r.status, r.text).toBe(200);
    return r;
  };
  const searchText = async (runId: string) =>
    (await ok(t.post('runs/search', { experiment_ids: [exp], filter: `attributes.run_id = '${runId}'`, run_view_type: 'ALL' }))).text;
  const getText = async (runId: string) => (await ok(t.get('runs/get', { run_id: runId }))).text;
  const storedCount = async (runId: string) =>
    (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM tracker_runs WHERE run_id = $1 AND run_json IS NOT NULL`, [runId]))[0]!
      .n;

  /** The run as search and get answer it, checked against the JSON built from its rows; the search's run. */
  async function view(runId: string): Promise<any> {
    expect(await storedCount(runId)).toBe(1);
    const stored = { search: await searchText(runId), get: await getText(runId) };
    await t.db.query(`UPDATE tracker_runs SET run_json = NULL WHERE run_id = $1`, [runId]);
    const built = { search: await searchText(runId), get: await getText(runId) };
    expect(stored).toEqual(built);
    const { runs } = JSON.parse(stored.search);
    expect(runs).toHaveLength(1);
    expect(JSON.parse(stored.get).run).toEqual(runs[0]);
    // a write after this one stores it again (view checks that it did)
    return runs[0];
  }
  const tags = (run: any) => Object.fromEntries((run.data.tags ?? []).map((x: any) => [x.key, x.value]));
  const params = (run: any) => Object.fromEntries((run.data.params ?? []).map((x: any) => [x.key, x.value]));
  const metrics = (run: any) => Object.fromEntries((run.data.metrics ?? []).map((x: any) => [x.key, x.value]));

  it('shows every kind of write in runs/search and runs/get', async () => {
    const created = await ok(
      t.post('runs/create', { experiment_id: exp, run_name: 'first', start_time: 1000, tags: [{ key: 'k0', value: 'v0' }] }),
    );
    const runId: string = created.body.run.info.run_id;
    let run = await view(runId);
    expect(run.info.run_name).toBe('first');
    expect(tags(run).k0).toBe('v0');

    await ok(
      t.post('runs/log-batch', {
        run_id: runId,
        metrics: [
          { key: 'acc', value: 0.5, timestamp: 1, step: 0 },
          { key: 'tiny', value: 1e-7, timestamp: 1, step: 0 },
          { key: 'huge', value: 1.5e16, timestamp: 1, step: 0 },
          { key: 'nan', value: 'NaN', timestamp: 1, step: 0 },
          { key: 'inf', value: '-Infinity', timestamp: 1, step: 0 },
        ],
        params: [{ key: 'lr', value: '0.1' }],
        tags: [{ key: 'k1', value: 'v1' }],
      }),
    );
    run = await view(runId);
    expect(metrics(run)).toEqual({ acc: 0.5, tiny: 1e-7, huge: 1.5e16, nan: 'NaN', inf: '-Infinity' });
    expect(params(run)).toEqual({ lr: '0.1' });
    expect(tags(run).k1).toBe('v1');

    await ok(t.post('runs/log-metric', { run_id: runId, key: 'acc', value: 0.75, timestamp: 2, step: 1 }));
    expect(metrics(await view(runId)).acc).toBe(0.75);
    // an older point does not move the latest value
    await ok(t.post('runs/log-metric', { run_id: runId, key: 'acc', value: 0.9, timestamp: 3, step: 0 }));
    expect(metrics(await view(runId)).acc).toBe(0.75);

    await ok(t.post('runs/log-parameter', { run_id: runId, key: 'layers', value: '3' }));
    expect(params(await view(runId))).toEqual({ layers: '3', lr: '0.1' });

    await ok(t.post('runs/set-tag', { run_id: runId, key: 'k1', value: 'v1b' }));
    expect(tags(await view(runId)).k1).toBe('v1b');

    await ok(t.post('runs/delete-tag', { run_id: runId, key: 'k0' }));
    expect(tags(await view(runId)).k0).toBeUndefined();

    await ok(t.post('runs/update', { run_id: runId, status: 'FINISHED', end_time: 5000, run_name: 'renamed' }));
    run = await view(runId);
    expect(run.info).toMatchObject({ status: 'FINISHED', end_time: 5000, run_name: 'renamed' });
    expect(tags(run)['mlflow.runName']).toBe('renamed');

    await ok(t.post('runs/set-tag', { run_id: runId, key: 'mlflow.runName', value: 'by-tag' }));
    expect((await view(runId)).info.run_name).toBe('by-tag');

    await ok(
      t.post('runs/log-inputs', {
        run_id: runId,
        datasets: [
          {
            tags: [{ key: 'mlflow.data.context', value: 'training' }],
            dataset: { name: 'ds', digest: 'd1', source_type: 'local', source: '/data' },
          },
        ],
        models: [{ model_id: 'm-in' }],
      }),
    );
    run = await view(runId);
    expect(run.inputs.dataset_inputs[0].dataset).toMatchObject({ name: 'ds', digest: 'd1' });
    expect(run.inputs.dataset_inputs[0].tags).toEqual([{ key: 'mlflow.data.context', value: 'training' }]);
    expect(run.inputs.model_inputs).toEqual([{ model_id: 'm-in' }]);

    await ok(t.post('runs/outputs', { run_id: runId, models: [{ model_id: 'm-out', step: 4 }] }));
    expect((await view(runId)).outputs.model_outputs).toEqual([{ model_id: 'm-out', step: 4 }]);

    await ok(t.post('runs/log-model', { run_id: runId, model_json: JSON.stringify({ artifact_path: 'model' }) }));
    expect(JSON.parse(tags(await view(runId))['mlflow.log-model.history'])).toEqual([{ artifact_path: 'model' }]);

    await ok(t.post('runs/delete', { run_id: runId }));
    expect((await view(runId)).info.lifecycle_stage).toBe('deleted');
    await ok(t.post('runs/restore', { run_id: runId }));
    expect((await view(runId)).info.lifecycle_stage).toBe('active');

    await ok(t.post('experiments/delete', { experiment_id: exp }));
    expect((await view(runId)).info.lifecycle_stage).toBe('deleted');
    await ok(t.post('experiments/restore', { experiment_id: exp }));
    expect((await view(runId)).info.lifecycle_stage).toBe('active');
  });

  it('leaves the stored JSON as it was when a write is refused', async () => {
    const runId: string = (await ok(t.post('runs/create', { experiment_id: exp, run_name: 'refused' }))).body.run.info.run_id;
    await ok(t.post('runs/log-parameter', { run_id: runId, key: 'p', value: 'a' }));
    const before = await searchText(runId);
    const refused = await t.post('runs/log-batch', { run_id: runId, params: [{ key: 'p', value: 'b' }], tags: [{ key: 'x', value: 'y' }] });
    expect(refused.status).toBe(400);
    expect(await searchText(runId)).toBe(before);
    expect(tags(await view(runId)).x).toBeUndefined();
  });

  it('reads a database upgraded from before migration 011, and the upgrade stores every run', async () => {
    const runIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const runId: string = (await ok(t.post('runs/create', { experiment_id: exp, run_name: `old-${i}` }))).body.run.info.run_id;
      await ok(
        t.post('runs/log-batch', {
          run_id: runId,
          metrics: [{ key: 'm', value: i, timestamp: 1, step: 0 }],
          tags: [{ key: 'i', value: `${i}` }],
        }),
      );
      runIds.push(runId);
    }
    const answers = async () => ({
      search: (await ok(t.post('runs/search', { experiment_ids: [exp], order_by: ['metrics.m DESC'], max_results: 2 }))).text,
      gets: await Promise.all(runIds.map(getText)),
    });
    const current = await answers();
    // The schema as it was before migration 011 (the column and its record gone): reads build every run.
    await t.db.exec(`ALTER TABLE tracker_runs DROP COLUMN run_json`);
    await t.db.query(`DELETE FROM svc_migrations WHERE namespace = 'tracker' AND id = '011_run_json'`);
    expect(await answers()).toEqual(current);
    // The upgrade applies 011 and stores the JSON of every run written before it.
    expect(await upgradeTrackerSchema(t.db)).toContain('011_run_json');
    const [missing] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM tracker_runs WHERE run_json IS NULL`);
    expect(missing!.n).toBe(0);
    expect(await answers()).toEqual(current);
    for (const runId of runIds) await view(runId);
  });
});
