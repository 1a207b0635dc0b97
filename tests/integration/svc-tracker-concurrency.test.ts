import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/platform/db/index.ts';
import { freshDatabase } from '../support/pg.ts';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// Concurrent writers on the real Postgres (a pool of connections, real row locks): nothing is lost, and the
// latest value per metric is the true maximum by (step, timestamp, value) whatever order the writers commit in.
describe('tracker under concurrent writers (Postgres)', () => {
  let t: TrackerHarness;
  let fresh: Awaited<ReturnType<typeof freshDatabase>>;

  beforeAll(async () => {
    fresh = await freshDatabase('tracker_concurrency');
    t = await trackerHarness({ db: openPostgres({ ...fresh.cfg, max: 20 }) });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await fresh?.drop();
  });

  const ok = async (res: Promise<{ status: number; text: string; body: any }>) => {
    const r = await res;
    expect(r.status, r.text).toBe(200);
    return r.body;
  };

  it('50 runs logging batches at once lose no metric, param or tag', async () => {
    const exp = (await ok(t.post('experiments/create', { name: 'fifty' }))).experiment_id;
    const runIds: string[] = await Promise.all(
      Array.from(
        { length: 50 },
        async (_, i) => (await ok(t.post('runs/create', { experiment_id: exp, run_name: `r${i}` }))).run.info.run_id,
      ),
    );
    // Every run gets 5 batches of 20 metric points, 5 params and 5 tags, all 250 batches in flight together.
    await Promise.all(
      runIds.flatMap((runId) =>
        Array.from({ length: 5 }, (_, b) =>
          ok(
            t.post('runs/log-batch', {
              run_id: runId,
              metrics: Array.from({ length: 20 }, (_, j) => ({
                key: `m${j % 4}`,
                value: b * 100 + j,
                timestamp: 1000 + b,
                step: b * 20 + j,
              })),
              params: Array.from({ length: 5 }, (_, j) => ({ key: `p${b}_${j}`, value: `${b}.${j}` })),
              tags: Array.from({ length: 5 }, (_, j) => ({ key: `t${b}_${j}`, value: runId })),
            }),
          ),
        ),
      ),
    );
    const [counts] = await t.db.query<{ metrics: number; params: number; tags: number; latest: number }>(
      `SELECT (SELECT count(*) FROM tracker_metrics m JOIN tracker_runs r USING (run_id) WHERE r.experiment_id = $1) AS metrics,
              (SELECT count(*) FROM tracker_params p JOIN tracker_runs r USING (run_id) WHERE r.experiment_id = $1) AS params,
              (SELECT count(*) FROM tracker_tags g JOIN tracker_runs r USING (run_id) WHERE r.experiment_id = $1 AND g.key LIKE 't%') AS tags,
              (SELECT count(*) FROM tracker_latest_metrics l JOIN tracker_runs r USING (run_id) WHERE r.experiment_id = $1) AS latest`,
      [Number(exp)],
    );
    expect(counts).toEqual({ metrics: 50 * 5 * 20, params: 50 * 25, tags: 50 * 25, latest: 50 * 4 });

    // Each run's latest point of m3 is from the last batch (highest step), read through the API.
    const searched = await ok(t.post('runs/search', { experiment_ids: [exp], max_results: 100 }));
    expect(searched.runs).toHaveLength(50);
    for (const run of searched.runs) {
      const m3 = run.data.metrics.find((m: { key: string }) => m.key === 'm3');
      expect(m3).toEqual({ key: 'm3', value: 419, timestamp: 1004, step: 99 });
      expect(run.data.params).toHaveLength(25);
    }
  });

  it('50 writers on one run settle on the maximum (step, timestamp, value) and keep every point', async () => {
    const runId = (await ok(t.post('runs/create', { experiment_id: '0' }))).run.info.run_id;
    const order = Array.from({ length: 50 }, (_, i) => i).sort(() => Math.random() - 0.5);
    await Promise.all(
      order.map((i) =>
        ok(t.post('runs/log-metric', { run_id: runId, key: 'loss', value: i % 7, timestamp: 5000 + (i % 3), step: Math.floor(i / 5) })),
      ),
    );
    // The same points again, as a client retrying every call would: nothing changes.
    await Promise.all(
      order.map((i) =>
        ok(t.post('runs/log-metric', { run_id: runId, key: 'loss', value: i % 7, timestamp: 5000 + (i % 3), step: Math.floor(i / 5) })),
      ),
    );
    const history = await ok(t.get('metrics/get-history', { run_id: runId, metric_key: 'loss' }));
    expect(history.metrics).toHaveLength(50);
    const best = Array.from({ length: 50 }, (_, i) => ({ value: i % 7, timestamp: 5000 + (i % 3), step: Math.floor(i / 5) })).sort(
      (a, b) => b.step - a.step || b.timestamp - a.timestamp || b.value - a.value,
    )[0]!;
    const run = await ok(t.get('runs/get', { run_id: runId }));
    expect(run.run.data.metrics).toEqual([{ key: 'loss', ...best }]);
  });

  it('two writers racing to set one param to different values: exactly one wins, the other is refused', async () => {
    const runId = (await ok(t.post('runs/create', { experiment_id: '0' }))).run.info.run_id;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.post('runs/log-parameter', { run_id: runId, key: 'seed', value: String(i % 2) })),
    );
    const run = await ok(t.get('runs/get', { run_id: runId }));
    const stored = run.run.data.params.find((p: { key: string }) => p.key === 'seed').value;
    for (const [i, r] of results.entries()) {
      expect(r.status).toBe(String(i % 2) === stored ? 200 : 400);
    }
  });
});
