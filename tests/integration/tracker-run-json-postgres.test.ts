import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/platform/db/index.ts';
import { freshDatabase } from '../support/pg.ts';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// Many writers on one run at once, on the real Postgres (a pool of connections, real row locks): every write takes
// the run's row lock first and rebuilds the run's stored JSON last, so none deadlocks and the search answers exactly
// the run's final state, the same text its rows give when the JSON is built from them.
describe('stored run JSON under concurrent writes to one run (Postgres)', () => {
  let t: TrackerHarness;
  let fresh: Awaited<ReturnType<typeof freshDatabase>>;

  beforeAll(async () => {
    fresh = await freshDatabase('tracker_run_json');
    t = await trackerHarness({ db: openPostgres({ ...fresh.cfg, max: 20 }) });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await fresh?.drop();
  });

  const ok = async (res: Promise<{ status: number; text: string; body: any }>) => {
    const r = await res;
    expect(r.status, r.text).toBe(200);
    return r;
  };

  const search = async (exp: string) =>
    (await ok(t.post('runs/search', { experiment_ids: [exp], order_by: ['metrics.step DESC'], max_results: 10 }))).text;

  /** Wave `w` on the run: 120 calls in flight together; batch g of all waves so far is w * 40 + b. */
  async function wave(runId: string, w: number): Promise<void> {
    const doomed = Array.from({ length: 20 }, (_, i) => ({ key: `doomed${w}_${i}`, value: 'x' }));
    await ok(t.post('runs/log-batch', { run_id: runId, tags: doomed }));
    const calls = [
      ...Array.from({ length: 40 }, (_, b) => {
        const g = w * 40 + b;
        return t.post('runs/log-batch', {
          run_id: runId,
          metrics: [
            { key: 'step', value: g, timestamp: 1000, step: g },
            { key: 'late', value: 1000 - g, timestamp: 2000 + g, step: 0 },
            ...Array.from({ length: 8 }, (_, k) => ({ key: `m${k}`, value: g * 10 + k, timestamp: 1000 + g, step: g })),
          ],
          params: [{ key: `p${g}`, value: `${g}` }],
          tags: [
            { key: `t${g}`, value: `${g}` },
            { key: 'contended', value: `batch-${g}` },
          ],
        });
      }),
      ...Array.from({ length: 40 }, (_, j) =>
        t.post('runs/set-tag', { run_id: runId, key: j % 2 ? 'contended' : `s${w}_${j}`, value: `tag-${j}` }),
      ),
      ...Array.from({ length: 20 }, (_, j) =>
        t.post('runs/log-metric', { run_id: runId, key: 'single', value: w * 20 + j, timestamp: 500, step: w * 20 + j }),
      ),
      ...doomed.map((d) => t.post('runs/delete-tag', { run_id: runId, key: d.key })),
    ];
    for (const r of await Promise.all(calls)) expect(r.status, r.text).toBe(200);
  }

  // A write that rebuilt the JSON without holding the run's lock from its start would leave a stale text behind in
  // some interleavings, not all: two runs, five waves each, the answer checked after every wave.
  it.each([1, 2])(
    'answers the final state after each wave of 120 log-batch, log-metric, set-tag and delete-tag calls (run %i)',
    async (n) => {
      const exp = (await ok(t.post('experiments/create', { name: `one-run-${n}` }))).body.experiment_id;
      const runId: string = (await ok(t.post('runs/create', { experiment_id: exp, run_name: 'busy' }))).body.run.info.run_id;
      for (let w = 0; w < 5; w++) {
        await wave(runId, w);
        const last = w * 40 + 39;
        const stored = await search(exp);
        const { runs } = JSON.parse(stored);
        expect(runs).toHaveLength(1);
        const run = runs[0];
        const metrics = Object.fromEntries(run.data.metrics.map((m: any) => [m.key, m]));
        expect(metrics.step).toMatchObject({ value: last, step: last });
        expect(metrics.late).toMatchObject({ value: 1000 - last, timestamp: 2000 + last });
        expect(metrics.single).toMatchObject({ value: w * 20 + 19, step: w * 20 + 19 });
        for (let k = 0; k < 8; k++) expect(metrics[`m${k}`]).toMatchObject({ value: last * 10 + k, step: last });
        expect(run.data.params).toHaveLength(last + 1);
        const tags = Object.fromEntries(run.data.tags.map((x: any) => [x.key, x.value]));
        for (let g = 0; g <= last; g++) expect(tags[`t${g}`]).toBe(`${g}`);
        for (let j = 0; j < 40; j += 2) expect(tags[`s${w}_${j}`]).toBe(`tag-${j}`);
        expect(Object.keys(tags).filter((k) => k.startsWith('doomed'))).toEqual([]);
        // The contended tag is whichever write committed last: the value its row holds.
        const [row] = await t.db.query<{ value: string }>(`SELECT value FROM tracker_tags WHERE run_id = $1 AND key = 'contended'`, [
          runId,
        ]);
        expect(tags.contended).toBe(row!.value);
        // The stored text is the one the rows give (cleared, the read builds it).
        await t.db.query(`UPDATE tracker_runs SET run_json = NULL WHERE run_id = $1`, [runId]);
        expect(await search(exp)).toBe(stored);
      }
    },
    120_000,
  );
});
