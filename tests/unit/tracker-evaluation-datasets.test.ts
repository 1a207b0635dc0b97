import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// MLflow 3's GenAI evaluation datasets as its client calls them (/api/3.0/mlflow/datasets/...): tags and records as
// JSON text, experiments linked and unlinked without repeats, records merged by their inputs.
describe('tracker evaluation datasets', () => {
  let t: TrackerHarness;
  let [e1, e2, e3] = ['', '', ''];
  beforeAll(async () => {
    t = await trackerHarness();
    [e1, e2, e3] = await Promise.all(
      ['eval-1', 'eval-2', 'eval-3'].map(async (name) => (await t.post('experiments/create', { name })).body.experiment_id),
    );
  });
  afterAll(async () => t?.close());

  const v3 = (path: string) => `/api/3.0/mlflow/datasets/${path}`;
  const create = async (name: string, experiment_ids: string[], tags: Record<string, string>) => {
    const res = await t.post(v3('create'), { name, experiment_ids, tags: JSON.stringify(tags) });
    expect(res.status, res.text).toBe(200);
    return res.body.dataset;
  };

  it('creates, reads, tags, links experiments and deletes a dataset', async () => {
    const d = await create('qa', [e1], { env: 'dev', initial: 'value' });
    expect(d).toMatchObject({ name: 'qa', experiment_ids: [e1] });
    expect(JSON.parse(d.tags)).toEqual({ env: 'dev', initial: 'value' });
    expect(d.dataset_id).toMatch(/^d-[0-9a-f]{32}$/);

    expect((await t.call('PATCH', v3(`${d.dataset_id}/tags`), { tags: JSON.stringify({ env: 'staging', added: 'x' }) })).status).toBe(200);
    expect((await t.call('DELETE', v3(`${d.dataset_id}/tags/added`))).status).toBe(200);
    expect(JSON.parse((await t.get(v3(d.dataset_id))).body.dataset.tags)).toEqual({ env: 'staging', initial: 'value' });

    const added = await t.post(v3(`${d.dataset_id}/add-experiments`), { experiment_ids: [e2, e3, e1] });
    expect(added.body.dataset.experiment_ids.sort()).toEqual([e1, e2, e3].sort());
    const removed = await t.post(v3(`${d.dataset_id}/remove-experiments`), { experiment_ids: [e2, '999'] });
    expect(removed.body.dataset.experiment_ids.sort()).toEqual([e1, e3].sort());
    expect((await t.get(v3(`${d.dataset_id}/experiment-ids`))).body.experiment_ids.sort()).toEqual([e1, e3].sort());

    expect((await t.call('DELETE', v3(d.dataset_id))).status).toBe(200);
    const gone = await t.get(v3(d.dataset_id));
    expect(gone.status).toBe(404);
    expect(gone.body.message).toContain('not found');
    const missing = await t.post(v3('d-nonexistent/add-experiments'), { experiment_ids: [e1] });
    expect(missing.status).toBe(404);
  });

  it('merges records by their inputs and counts what was inserted and updated', async () => {
    const d = await create('records', [e1], {});
    const first = [
      { inputs: { question: 'What is MLflow?' }, expectations: { answer: 'a platform' }, tags: { difficulty: 'easy' } },
      { inputs: { question: 'What is Python?' }, expectations: { answer: 'a language' } },
    ];
    const up = await t.post(v3(`${d.dataset_id}/records`), { records: JSON.stringify(first) });
    expect(up.body).toEqual({ inserted_count: 2, updated_count: 0 });
    const second = [
      { inputs: { question: 'What is MLflow?' }, expectations: { answer: 'an open-source platform' }, tags: { updated: 'true' } },
      { inputs: { question: 'What is Docker?' }, expectations: { answer: 'containers' } },
    ];
    expect((await t.post(v3(`${d.dataset_id}/records`), { records: JSON.stringify(second) })).body).toEqual({
      inserted_count: 1,
      updated_count: 1,
    });
    const records = JSON.parse((await t.get(v3(`${d.dataset_id}/records`))).body.records);
    expect(records).toHaveLength(3);
    expect(records.find((r: { inputs: { question: string } }) => r.inputs.question === 'What is MLflow?')).toMatchObject({
      expectations: { answer: 'an open-source platform' },
      tags: { difficulty: 'easy', updated: 'true' },
    });
    expect((await t.post(v3('invalid-id/records'), { records: JSON.stringify(first) })).status).toBe(404);
    expect((await t.post(v3(`${d.dataset_id}/records`), { records: 'not json' })).status).toBe(400);
  });

  it('searches by experiment, tag and name order', async () => {
    const s1 = await create('search-b', [e2], { team: 'ml' });
    await create('search-a', [e2, e3], { team: 'data' });
    await create('search-c', [e3], { team: 'ml' });
    const byExperiment = await t.post(v3('search'), { experiment_ids: [e2] });
    expect(byExperiment.body.datasets.map((d: { name: string }) => d.name).sort()).toEqual(['search-a', 'search-b']);
    const ml = await t.post(v3('search'), { experiment_ids: [e2, e3], filter_string: "tags.team = 'ml'", order_by: ['name ASC'] });
    expect(ml.body.datasets.map((d: { name: string }) => d.name)).toEqual(['search-b', 'search-c']);
    expect(ml.body.datasets[0].dataset_id).toBe(s1.dataset_id);
  });
});
