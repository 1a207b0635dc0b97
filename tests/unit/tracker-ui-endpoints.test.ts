import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// Endpoints MLflow's own web UI calls (and MLflow's REST tests with it): whole metric histories of several runs,
// a file uploaded into a run, and run files read at the root as well as under the prefixes.
describe('tracker endpoints of MLflow UI', () => {
  let t: TrackerHarness;
  beforeAll(async () => {
    t = await trackerHarness();
  });
  afterAll(async () => t?.close());

  const ajax = (path: string) => `/ajax-api/2.0/mlflow/${path}`;
  const newRun = async () => (await t.post('runs/create', { experiment_id: '0' })).body.run.info.run_id as string;

  it('answers get-history-bulk: each run whole, runs in id order, points in MLflow order, max_results a run', async () => {
    const [a, b] = [await newRun(), await newRun()];
    const points = [
      { key: 'm', timestamp: 1, step: 2, value: 10 },
      { key: 'm', timestamp: 1, step: 3, value: 12 },
      { key: 'm', timestamp: 1, step: 3, value: 11 },
      { key: 'm', timestamp: 2, step: 3, value: 12 },
    ];
    for (const id of [a, b]) await t.post('runs/log-batch', { run_id: id, metrics: points });
    const res = await t.get(ajax('metrics/get-history-bulk'), { run_id: [b, a], metric_key: 'm' });
    expect(res.status, res.text).toBe(200);
    const ordered = [points[0], points[2], points[1], points[3]];
    const [first, second] = [a, b].sort();
    expect(res.body.metrics).toEqual([...ordered.map((p) => ({ ...p, run_id: first })), ...ordered.map((p) => ({ ...p, run_id: second }))]);
    const limited = await t.get(ajax('metrics/get-history-bulk'), { run_id: [a], metric_key: 'm', max_results: 2 });
    expect(limited.body.metrics).toHaveLength(2);
  });

  it.each([
    [{ metric_key: 'k' }, 'GetMetricHistoryBulk request must specify at least one run_id'],
    [
      { run_id: Array.from({ length: 101 }, (_, i) => `id_${i}`), metric_key: 'k' },
      'GetMetricHistoryBulk request cannot specify more than',
    ],
    [{ run_id: ['123'] }, 'GetMetricHistoryBulk request must specify a metric_key'],
  ])('refuses get-history-bulk %j', async (query, message) => {
    const res = await t.get(ajax('metrics/get-history-bulk'), query);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(message);
  });

  it('takes a file uploaded into a run and serves it at the root and under the prefixes', async () => {
    const id = await newRun();
    const put = await t.app.request(`${ajax('upload-artifact')}?run_uuid=${id}&path=dir/test.txt`, { method: 'POST', body: 'hello world' });
    expect(put.status, await put.clone().text()).toBe(200);
    for (const path of ['/get-artifact', ajax('get-artifact')]) {
      const got = await t.get(path, { run_uuid: id, path: 'dir/test.txt' });
      expect(got.status).toBe(200);
      expect(got.text).toBe('hello world');
    }
    // A file without an extension is served as text, as MLflow serves it.
    await t.app.request(`${ajax('upload-artifact')}?run_uuid=${id}&path=MLproject`, { method: 'POST', body: 'name: p' });
    const plain = await t.app.request(`/get-artifact?run_uuid=${id}&path=MLproject`);
    expect(plain.headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it.each([
    ['', 'Request must specify run_uuid.'],
    ['run_uuid=RUN', 'Request must specify path.'],
    ['run_uuid=RUN&path=', 'Request must specify path.'],
    ['run_uuid=RUN&path=../test.txt', 'Invalid path'],
    ['run_uuid=RUN&path=test.txt', 'Request must specify data.'],
  ])('refuses upload-artifact ?%s', async (query, message) => {
    const id = await newRun();
    const res = await t.app.request(`${ajax('upload-artifact')}?${query.replace('RUN', id)}`, { method: 'POST' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain(message);
  });

  it('refuses an upload above 10 MiB before keeping any of it', async () => {
    const id = await newRun();
    const res = await t.app.request(`${ajax('upload-artifact')}?run_uuid=${id}&path=big.bin`, {
      method: 'POST',
      body: new Uint8Array(10 * 1024 * 1024 + 1),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toBe('Artifact size is too large. Max size is 10MB.');
    expect((await t.get('/get-artifact', { run_id: id, path: 'big.bin' })).status).toBe(404);
  });

  it('records a prompt engineering run: finished, params, tags and the evaluation table', async () => {
    const exp = (await t.post('experiments/create', { name: 'promptlab' })).body.experiment_id;
    const res = await t.post(ajax('runs/create-promptlab-run'), {
      experiment_id: exp,
      run_name: 'my_run_name',
      prompt_template: 'my_prompt_template',
      prompt_parameters: [{ key: 'my_key', value: 'my_value' }],
      model_route: 'my_route',
      model_parameters: [{ key: 'temperature', value: '0.1' }],
      model_input: 'my_input',
      model_output: 'my_output',
      model_output_parameters: [{ key: 'latency', value: '100' }],
      mlflow_version: '1.0.0',
      user_id: 'username',
      start_time: 456,
    });
    expect(res.status, res.text).toBe(200);
    const run = res.body.run;
    expect(run.info).toMatchObject({
      run_name: 'my_run_name',
      experiment_id: exp,
      user_id: 'username',
      status: 'FINISHED',
      start_time: 456,
    });
    expect(run.data.params).toEqual(
      expect.arrayContaining([
        { key: 'model_route', value: 'my_route' },
        { key: 'prompt_template', value: 'my_prompt_template' },
        { key: 'temperature', value: '0.1' },
      ]),
    );
    expect(run.data.tags).toEqual(
      expect.arrayContaining([
        { key: 'mlflow.loggedArtifacts', value: '[{"path": "eval_results_table.json", "type": "table"}]' },
        { key: 'mlflow.runSourceType', value: 'PROMPT_ENGINEERING' },
      ]),
    );
    const table = await t.get('/get-artifact', { run_id: run.info.run_id, path: 'eval_results_table.json' });
    expect(JSON.parse(table.text)).toEqual({
      columns: ['my_key', 'prompt', 'output', 'latency'],
      data: [['my_value', 'my_input', 'my_output', '100']],
    });
  });

  it.each([
    [{}, 'experiment_id'],
    [{ experiment_id: '123' }, 'prompt_template'],
    [{ experiment_id: '123', prompt_template: 't' }, 'prompt_parameters'],
    [{ experiment_id: '123', prompt_template: 't', prompt_parameters: [{ key: 'k', value: 'v' }] }, 'model_route'],
    [{ experiment_id: '123', prompt_template: 't', prompt_parameters: [{ key: 'k', value: 'v' }], model_route: 'r' }, 'model_input'],
    [
      { experiment_id: '123', prompt_template: 't', prompt_parameters: [{ key: 'k', value: 'v' }], model_route: 'r', model_input: 'i' },
      'mlflow_version',
    ],
  ])('refuses a prompt engineering run without %j', async (body, field) => {
    const res = await t.post(ajax('runs/create-promptlab-run'), body);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(`CreatePromptlabRun request must specify ${field}.`);
  });
});
