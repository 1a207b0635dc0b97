import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// Traces as MLflow 3's client sends them (StartTraceV3 when a trace ends, tags through the v2 paths, search by
// experiment) and as older clients do (v2 start and end), and the version probe the client makes first.
describe('tracker traces', () => {
  let t: TrackerHarness;
  let exp: string;
  beforeAll(async () => {
    t = await trackerHarness();
    exp = (await t.post('experiments/create', { name: 'traces' })).body.experiment_id;
  });
  afterAll(async () => t?.close());

  const v3 = (path: string) => `/api/3.0/mlflow/${path}`;
  const userTags = (tags: Record<string, string>) => Object.fromEntries(Object.entries(tags).filter(([k]) => !k.startsWith('mlflow.')));

  it('answers GET /version with the MLflow release it speaks, so the client sends its traces', async () => {
    const res = await t.call('GET', '/version');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/^3\.\d+\.\d+$/);
  });

  it('keeps a v3 trace: info, metadata and tags, readable by id, tags set and deleted', async () => {
    const trace_info = {
      trace_id: 'tr-1234',
      trace_location: { type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: exp } },
      request_time: '1970-01-01T00:00:01Z',
      execution_duration: '2s',
      state: 'OK',
      request_preview: '{"q": "hi"}',
      trace_metadata: { 'mlflow.trace_schema.version': '3' },
      tags: { tag1: 'red', tag2: 'blue' },
    };
    const started = await t.post(v3('traces'), { trace: { trace_info } });
    expect(started.status, started.text).toBe(200);
    expect(started.body.trace.trace_info).toMatchObject({
      trace_id: 'tr-1234',
      state: 'OK',
      execution_duration: '2s',
      request_preview: '{"q": "hi"}',
    });
    expect(Date.parse(started.body.trace.trace_info.request_time)).toBe(1000);
    expect(started.body.trace.trace_info.tags['mlflow.artifactLocation']).toBe(`mlflow-artifacts:/${exp}/traces/tr-1234/artifacts`);

    expect((await t.call('PATCH', 'traces/tr-1234/tags', { key: 'tag1', value: 'green' })).status).toBe(200);
    expect((await t.call('DELETE', 'traces/tr-1234/tags', { key: 'tag2' })).status).toBe(200);
    const got = await t.get(v3('traces/tr-1234'));
    expect(userTags(got.body.trace.trace_info.tags)).toEqual({ tag1: 'green' });
    expect(got.body.trace.trace_info.trace_metadata).toEqual({ 'mlflow.trace_schema.version': '3', 'mlflow.trace.infoFinalized': 'true' });

    const missing = await t.get(v3('traces/tr-none'));
    expect(missing.status).toBe(404);
    expect(missing.body.error_code).toBe('RESOURCE_DOES_NOT_EXIST');
  });

  it('starts and ends a v2 trace, merging metadata and tags and timing it', async () => {
    const start = await t.post('traces', {
      experiment_id: exp,
      timestamp_ms: 1000,
      request_metadata: [
        { key: 'meta1', value: 'apple' },
        { key: 'meta2', value: 'grape' },
      ],
      tags: [{ key: 'tag1', value: 'football' }],
    });
    expect(start.status, start.text).toBe(200);
    const id = start.body.trace_info.request_id;
    expect(start.body.trace_info).toMatchObject({ experiment_id: exp, timestamp_ms: 1000, execution_time_ms: 0, status: 'IN_PROGRESS' });
    const end = await t.call('PATCH', `traces/${id}`, {
      request_id: id,
      timestamp_ms: 3000,
      status: 'OK',
      request_metadata: [{ key: 'meta1', value: 'orange' }],
      tags: [{ key: 'tag2', value: 'tennis' }],
    });
    expect(end.status, end.text).toBe(200);
    expect(end.body.trace_info).toMatchObject({ timestamp_ms: 1000, execution_time_ms: 2000, status: 'OK' });
    expect(end.body.trace_info.request_metadata).toEqual([
      { key: 'meta1', value: 'orange' },
      { key: 'meta2', value: 'grape' },
    ]);
    const info = await t.get(`traces/${id}/info`);
    expect(info.body.trace_info.tags.filter((x: { key: string }) => !x.key.startsWith('mlflow.'))).toEqual([
      { key: 'tag1', value: 'football' },
      { key: 'tag2', value: 'tennis' },
    ]);
  });

  it('searches traces of an experiment newest first, by tag, page by page, and deletes them', async () => {
    const other = (await t.post('experiments/create', { name: 'traces-search' })).body.experiment_id;
    for (const [i, color] of ['red', 'blue', 'red'].entries()) {
      await t.post(v3('traces'), {
        trace: {
          trace_info: {
            trace_id: `tr-s${i}`,
            trace_location: { type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: other } },
            request_time: new Date(1000 * (i + 1)).toISOString(),
            state: 'OK',
            tags: { color },
          },
        },
      });
    }
    const locations = [{ type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: other } }];
    const all = await t.post(v3('traces/search'), { locations, max_results: 2 });
    expect(all.status, all.text).toBe(200);
    expect(all.body.traces.map((x: { trace_id: string }) => x.trace_id)).toEqual(['tr-s2', 'tr-s1']);
    const next = await t.post(v3('traces/search'), { locations, max_results: 2, page_token: all.body.next_page_token });
    expect(next.body.traces.map((x: { trace_id: string }) => x.trace_id)).toEqual(['tr-s0']);
    const red = await t.post(v3('traces/search'), { locations, filter: "tags.color = 'red'", order_by: ['timestamp_ms ASC'] });
    expect(red.body.traces.map((x: { trace_id: string }) => x.trace_id)).toEqual(['tr-s0', 'tr-s2']);
    const bad = await t.post(v3('traces/search'), { locations, filter: 'spans.x = 1' });
    expect(bad.status).toBe(400);

    const deleted = await t.post('traces/delete-traces', { experiment_id: other, max_timestamp_millis: 2000 });
    expect(deleted.body).toEqual({ traces_deleted: 2 });
    expect((await t.post('traces/delete-traces', { experiment_id: other, request_ids: ['tr-s2'] })).body).toEqual({ traces_deleted: 1 });
  });
});
