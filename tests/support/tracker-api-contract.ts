import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/platform/db/index.ts';
import { trackerHarness, type TrackerHarness } from './tracker.ts';

// The tracking API through HTTP, as the MLflow client uses it; run on PGlite (unit) and on Postgres (integration).
// One database per file (starting one is the slow part); every test makes its own experiment or run, so no test
// depends on another's data.
export function trackerApiContract(name: string, open: () => Promise<{ db: Database; cleanup(): Promise<void> }>) {
  describe(`tracker API (${name})`, () => {
    let t: TrackerHarness;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      const opened = await open();
      cleanup = opened.cleanup;
      t = await trackerHarness({ db: opened.db });
    }, 120_000);
    afterAll(async () => {
      await t?.close();
      await cleanup?.();
    });

    async function newRun(experimentId = '0', extra: Record<string, unknown> = {}) {
      const res = await t.post('runs/create', { experiment_id: experimentId, start_time: 1000, ...extra });
      expect(res.status, res.text).toBe(200);
      return res.body.run;
    }

    describe('experiments', () => {
      it('has the Default experiment 0 with a proxied artifact location', async () => {
        const res = await t.get('experiments/get', { experiment_id: '0' });
        expect(res.status).toBe(200);
        expect(res.body.experiment).toMatchObject({
          experiment_id: '0',
          name: 'Default',
          artifact_location: 'mlflow-artifacts:/0',
          lifecycle_stage: 'active',
        });
      });

      it('creates, finds by name, renames, tags, deletes and restores', async () => {
        const created = await t.post('experiments/create', { name: 'exp-a', tags: [{ key: 'team', value: 'ml' }] });
        expect(created.status, created.text).toBe(200);
        const id = created.body.experiment_id;
        expect(id).toMatch(/^\d+$/);

        const byName = await t.get('experiments/get-by-name', { experiment_name: 'exp-a' });
        expect(byName.body.experiment).toMatchObject({
          experiment_id: id,
          artifact_location: `mlflow-artifacts:/${id}`,
          tags: [{ key: 'team', value: 'ml' }],
        });

        expect((await t.post('experiments/update', { experiment_id: id, new_name: 'exp-b' })).status).toBe(200);
        expect((await t.post('experiments/set-experiment-tag', { experiment_id: id, key: 'team', value: 'data' })).status).toBe(200);
        const renamed = await t.get('experiments/get', { experiment_id: id });
        expect(renamed.body.experiment).toMatchObject({ name: 'exp-b', tags: [{ key: 'team', value: 'data' }] });

        expect((await t.post('experiments/delete', { experiment_id: id })).status).toBe(200);
        expect((await t.get('experiments/get', { experiment_id: id })).body.experiment.lifecycle_stage).toBe('deleted');
        expect((await t.post('experiments/restore', { experiment_id: id })).status).toBe(200);
        expect((await t.get('experiments/get', { experiment_id: id })).body.experiment.lifecycle_stage).toBe('active');
      });

      it.each([
        [
          'a missing name',
          'experiments/get-by-name',
          'GET',
          { experiment_name: 'nope' },
          404,
          'RESOURCE_DOES_NOT_EXIST',
          "Could not find experiment with name 'nope'",
        ],
        [
          'an unknown id',
          'experiments/get',
          'GET',
          { experiment_id: '999' },
          404,
          'RESOURCE_DOES_NOT_EXIST',
          'No Experiment with id=999 exists',
        ],
        ['a non-integer id', 'experiments/get', 'GET', { experiment_id: 'abc' }, 400, 'INVALID_PARAMETER_VALUE', 'must be a valid integer'],
        [
          'a duplicate name',
          'experiments/create',
          'POST',
          { name: 'Default' },
          400,
          'RESOURCE_ALREADY_EXISTS',
          'Experiment(name=Default) already exists',
        ],
        ['no name', 'experiments/create', 'POST', {}, 400, 'INVALID_PARAMETER_VALUE', "Missing value for required parameter 'name'"],
      ])('refuses %s', async (_what, path, method, input, status, code, message) => {
        const res = method === 'GET' ? await t.get(path, input as Record<string, string>) : await t.post(path, input);
        expect(res.status).toBe(status);
        expect(res.body.error_code).toBe(code);
        expect(res.body.message).toContain(message);
      });

      it('is reachable under the neutral prefix and the UI prefix', async () => {
        for (const prefix of ['/api/2.0/tracker', '/ajax-api/2.0/mlflow']) {
          const res = await t.call('GET', `${prefix}/experiments/get?experiment_id=0`);
          expect(res.body.experiment.name).toBe('Default');
        }
      });

      it('tells MLflow 3 clients what it supports', async () => {
        const res = await t.call('GET', '/api/3.0/mlflow/server-info');
        expect(res.body).toMatchObject({ store_type: 'SqlStore', multipart_uploads_enabled: false });
      });

      it("answers the UI's gateway-proxy as MLflow without a gateway: no endpoints for GET and POST, 405 otherwise", async () => {
        const path = '/ajax-api/2.0/mlflow/gateway-proxy';
        for (const [method, body] of [
          ['GET', undefined],
          ['POST', {}],
          ['POST', { gateway_path: 'gateway/chat/invocations', json_data: { messages: [] } }],
        ] as const) {
          const res = await t.call(method, method === 'GET' ? `${path}?gateway_path=api/2.0/endpoints` : path, body);
          expect({ method, status: res.status, body: res.body }).toEqual({ method, status: 200, body: { endpoints: [] } });
        }
        const refused = await t.call('DELETE', path);
        expect(refused.status).toBe(405);
        expect(refused.body.error_code).toBe('BAD_REQUEST');
        // Only the UI's prefix has it, as in MLflow.
        expect((await t.call('POST', '/api/2.0/mlflow/gateway-proxy', {})).status).toBe(404);
      });

      it('answers unknown endpoints with ENDPOINT_NOT_FOUND', async () => {
        const res = await t.post('runs/fly-away', {});
        expect(res.status).toBe(404);
        expect(res.body.error_code).toBe('ENDPOINT_NOT_FOUND');
      });
    });

    describe('runs', () => {
      it('creates a run with its name tag, user tag and artifact uri, and reads it back', async () => {
        const run = await newRun('0', { run_name: 'first', user_id: 'ada', tags: [{ key: 'k', value: 'v' }] });
        expect(run.info).toMatchObject({
          run_name: 'first',
          experiment_id: '0',
          user_id: 'ada',
          status: 'RUNNING',
          start_time: 1000,
          lifecycle_stage: 'active',
          artifact_uri: `mlflow-artifacts:/0/${run.info.run_id}/artifacts`,
        });
        expect(run.info.run_uuid).toBe(run.info.run_id);
        expect(run.data.tags).toEqual(
          expect.arrayContaining([
            { key: 'k', value: 'v' },
            { key: 'mlflow.runName', value: 'first' },
            { key: 'mlflow.user', value: 'ada' },
          ]),
        );
        const got = await t.get('runs/get', { run_id: run.info.run_id });
        expect(got.body.run.info).toEqual(run.info);
      });

      it('gives an unnamed run a generated name', async () => {
        const run = await newRun();
        expect(run.info.run_name).toMatch(/^[a-z]+-[a-z]+-\d+$/);
      });

      it('updates status, end time and name; set-tag mlflow.runName renames', async () => {
        const run = await newRun();
        const id = run.info.run_id;
        const upd = await t.post('runs/update', { run_id: id, status: 'FINISHED', end_time: 2000, run_name: 'renamed' });
        expect(upd.body.run_info).toMatchObject({ status: 'FINISHED', end_time: 2000, run_name: 'renamed' });
        await t.post('runs/set-tag', { run_id: id, key: 'mlflow.runName', value: 'again' });
        const got = (await t.get('runs/get', { run_id: id })).body.run;
        expect(got.info.run_name).toBe('again');
        expect(got.data.tags).toContainEqual({ key: 'mlflow.runName', value: 'again' });
      });

      it('logs params once: the same value again is fine, another value is refused', async () => {
        const id = (await newRun()).info.run_id;
        expect((await t.post('runs/log-parameter', { run_id: id, key: 'lr', value: '0.1' })).status).toBe(200);
        expect((await t.post('runs/log-parameter', { run_id: id, key: 'lr', value: '0.1' })).status).toBe(200);
        const changed = await t.post('runs/log-parameter', { run_id: id, key: 'lr', value: '0.2' });
        expect(changed.status).toBe(400);
        expect(changed.body.error_code).toBe('INVALID_PARAMETER_VALUE');
        expect(changed.body.message).toContain('Changing param values is not allowed');
        const batch = await t.post('runs/log-batch', { run_id: id, params: [{ key: 'lr', value: '0.3' }] });
        expect(batch.status).toBe(400);
        expect(batch.body.message).toContain("Params were already logged='[{'key': 'lr', 'old_value': '0.1', 'new_value': '0.3'}]'");
      });

      it('overwrites tags and deletes them', async () => {
        const id = (await newRun()).info.run_id;
        await t.post('runs/set-tag', { run_id: id, key: 'stage', value: 'a' });
        await t.post('runs/log-batch', {
          run_id: id,
          tags: [
            { key: 'stage', value: 'b' },
            { key: 'stage', value: 'c' },
          ],
        });
        let tags = (await t.get('runs/get', { run_id: id })).body.run.data.tags;
        expect(tags).toContainEqual({ key: 'stage', value: 'c' });
        expect((await t.post('runs/delete-tag', { run_id: id, key: 'stage' })).status).toBe(200);
        tags = (await t.get('runs/get', { run_id: id })).body.run.data.tags;
        expect(tags.find((x: { key: string }) => x.key === 'stage')).toBeUndefined();
        const missing = await t.post('runs/delete-tag', { run_id: id, key: 'stage' });
        expect(missing.body.error_code).toBe('RESOURCE_DOES_NOT_EXIST');
      });

      it('appends metrics, keeps the latest by (step, timestamp, value), and pages the history', async () => {
        const id = (await newRun()).info.run_id;
        const points = [
          { key: 'loss', value: 0.9, timestamp: 10, step: 0 },
          { key: 'loss', value: 0.5, timestamp: 30, step: 2 },
          { key: 'loss', value: 0.7, timestamp: 40, step: 1 },
        ];
        await t.post('runs/log-batch', { run_id: id, metrics: points });
        await t.post('runs/log-metric', { run_id: id, ...points[0] }); // a retry: no second row
        const run = (await t.get('runs/get', { run_id: id })).body.run;
        expect(run.data.metrics).toEqual([{ key: 'loss', value: 0.5, timestamp: 30, step: 2 }]);

        const all = await t.get('metrics/get-history', { run_id: id, metric_key: 'loss' });
        expect(all.body.metrics.map((m: { value: number }) => m.value)).toEqual([0.9, 0.5, 0.7]);
        expect(all.body.next_page_token).toBeUndefined();

        const first = await t.get('metrics/get-history', { run_id: id, metric_key: 'loss', max_results: 2 });
        expect(first.body.metrics).toHaveLength(2);
        const second = await t.get('metrics/get-history', {
          run_id: id,
          metric_key: 'loss',
          max_results: 2,
          page_token: first.body.next_page_token,
        });
        expect(second.body.metrics.map((m: { value: number }) => m.value)).toEqual([0.7]);
        expect(second.body.next_page_token).toBeUndefined();
      });

      it('samples metric history for charts: first and last points kept, at most max_results per run', async () => {
        const a = (await newRun()).info.run_id;
        const b = (await newRun()).info.run_id;
        const points = Array.from({ length: 100 }, (_, i) => ({ key: 'loss', value: 100 - i, timestamp: 1000 + i, step: i }));
        await t.post('runs/log-batch', { run_id: a, metrics: points });
        await t.post('runs/log-batch', { run_id: b, metrics: points.slice(0, 3) });
        const res = await t.get('metrics/get-history-bulk-interval', { run_ids: [a, b], metric_key: 'loss', max_results: 10 });
        expect(res.status, res.text).toBe(200);
        const ofA = res.body.metrics.filter((m: { run_id: string }) => m.run_id === a);
        const ofB = res.body.metrics.filter((m: { run_id: string }) => m.run_id === b);
        expect(ofA.length).toBeLessThanOrEqual(10);
        expect(ofA[0].step).toBe(0);
        expect(ofA.at(-1).step).toBe(99);
        expect(ofB.map((m: { step: number }) => m.step)).toEqual([0, 1, 2]);
        const ranged = await t.get('metrics/get-history-bulk-interval', {
          run_ids: [a],
          metric_key: 'loss',
          max_results: 5,
          start_step: 10,
          end_step: 20,
        });
        expect(ranged.body.metrics.every((m: { step: number }) => m.step >= 10 && m.step <= 20)).toBe(true);
        expect(ranged.body.metrics[0].step).toBe(10);
      });

      it('accepts NaN and infinities as the client sends them and gives them back the same way', async () => {
        const id = (await newRun()).info.run_id;
        const res = await t.post('runs/log-batch', {
          run_id: id,
          metrics: [
            { key: 'a', value: 'NaN', timestamp: 1, step: 0 },
            { key: 'b', value: 'Infinity', timestamp: 1, step: 0 },
            { key: 'c', value: '-Infinity', timestamp: 1, step: 0 },
          ],
        });
        expect(res.status, res.text).toBe(200);
        const metrics = (await t.get('runs/get', { run_id: id })).body.run.data.metrics;
        expect(metrics.map((m: { key: string; value: unknown }) => [m.key, m.value])).toEqual([
          ['a', 'NaN'],
          ['b', 'Infinity'],
          ['c', '-Infinity'],
        ]);
        const history = await t.get('metrics/get-history', { run_id: id, metric_key: 'b' });
        expect(history.body.metrics[0].value).toBe('Infinity');
      });

      it('cuts param and tag values to MLflow limits, as its server does by default', async () => {
        const id = (await newRun()).info.run_id;
        const long = 'x'.repeat(7000);
        expect((await t.post('runs/log-parameter', { run_id: id, key: 'long', value: long })).status).toBe(200);
        expect((await t.post('runs/log-parameter', { run_id: id, key: 'long', value: long })).status).toBe(200);
        expect((await t.post('runs/set-tag', { run_id: id, key: 'long', value: 'y'.repeat(9000) })).status).toBe(200);
        const run = (await t.get('runs/get', { run_id: id })).body.run;
        expect(run.data.params.find((p: { key: string }) => p.key === 'long').value).toHaveLength(6000);
        expect(run.data.tags.find((p: { key: string }) => p.key === 'long').value).toHaveLength(8000);
      });

      it('enforces MLflow batch limits', async () => {
        const id = (await newRun()).info.run_id;
        const params = Array.from({ length: 101 }, (_, i) => ({ key: `p${i}`, value: 'x' }));
        const res = await t.post('runs/log-batch', { run_id: id, params });
        expect(res.status).toBe(400);
        expect(res.body.message).toContain('A batch logging request can contain at most 100 params');
        const metrics = Array.from({ length: 1001 }, (_, i) => ({ key: 'm', value: i, timestamp: 1, step: i }));
        expect((await t.post('runs/log-batch', { run_id: id, metrics })).body.message).toContain('at most 1000 metrics');
      });

      it.each([
        ['101 tags', { tags: Array.from({ length: 101 }, (_, i) => ({ key: `t${i}`, value: 'x' })) }, 'at most 100 tags. Got 101 tags.'],
        [
          '1001 entities in total',
          {
            metrics: Array.from({ length: 900 }, (_, i) => ({ key: 'm', value: i, timestamp: 1, step: i })),
            params: Array.from({ length: 100 }, (_, i) => ({ key: `p${i}`, value: 'x' })),
            tags: [{ key: 't', value: 'x' }],
          },
          'A batch logging request can contain at most 1000 metrics, params, and tags. Got 1001 metrics, params, and tags. ' +
            'Please split up metrics, params, and tags across multiple requests and try again.',
        ],
      ])('refuses a batch of %s before writing any of it, in MLflow words', async (_what, batch, message) => {
        const id = (await newRun()).info.run_id;
        const res = await t.post('runs/log-batch', { run_id: id, ...batch });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error_code: 'INVALID_PARAMETER_VALUE', message: expect.stringContaining(message) });
        const run = (await t.get('runs/get', { run_id: id })).body.run;
        expect(run.data.metrics).toBeUndefined();
        expect(run.data.params).toBeUndefined();
        expect(run.data.tags.map((x: { key: string }) => x.key)).toEqual(['mlflow.runName']);
      });

      it('refuses writes to a deleted run and lets them through once restored', async () => {
        const id = (await newRun()).info.run_id;
        await t.post('runs/delete', { run_id: id });
        expect((await t.get('runs/get', { run_id: id })).body.run.info.lifecycle_stage).toBe('deleted');
        const refused = await t.post('runs/log-metric', { run_id: id, key: 'm', value: 1, timestamp: 1 });
        expect(refused.status).toBe(400);
        expect(refused.body.message).toContain("must be in the 'active' state");
        await t.post('runs/restore', { run_id: id });
        expect((await t.post('runs/log-metric', { run_id: id, key: 'm', value: 1, timestamp: 1 })).status).toBe(200);
      });

      it.each([
        ['an unknown run', 'runs/get', { run_id: 'nope' }, 404, 'RESOURCE_DOES_NOT_EXIST'],
        ['a bad metric name', 'runs/log-metric', { key: '../x', value: 1, timestamp: 1 }, 400, 'INVALID_PARAMETER_VALUE'],
        ['a metric without a value', 'runs/log-metric', { key: 'x', timestamp: 1 }, 400, 'INVALID_PARAMETER_VALUE'],
        ['a non-numeric metric', 'runs/log-metric', { key: 'x', value: 'high', timestamp: 1 }, 400, 'INVALID_PARAMETER_VALUE'],
        ['a NUL character in a tag value', 'runs/set-tag', { key: 'x', value: 'a\u0000b' }, 400, 'INVALID_PARAMETER_VALUE'],
        ['a timestamp beyond 64 bits', 'runs/log-metric', { key: 'x', value: 1, timestamp: 1e30 }, 400, 'INVALID_PARAMETER_VALUE'],
      ])('refuses %s', async (_what, path, input, status, code) => {
        const id = (await newRun()).info.run_id;
        const res = path === 'runs/get' ? await t.get(path, input as Record<string, string>) : await t.post(path, { run_id: id, ...input });
        expect(res.status).toBe(status);
        expect(res.body.error_code).toBe(code);
      });

      it('logs dataset inputs once with their tags and shows them on the run', async () => {
        const exp = (await t.post('experiments/create', { name: 'datasets' })).body.experiment_id;
        const id = (await newRun(exp)).info.run_id;
        const input = {
          run_id: id,
          datasets: [
            {
              tags: [{ key: 'mlflow.data.context', value: 'training' }],
              dataset: { name: 'iris', digest: 'abc123', source_type: 'local', source: '{"uri": "/tmp/iris.csv"}', schema: '{}' },
            },
          ],
        };
        expect((await t.post('runs/log-inputs', input)).status).toBe(200);
        expect((await t.post('runs/log-inputs', input)).status).toBe(200);
        const run = (await t.get('runs/get', { run_id: id })).body.run;
        expect(run.inputs.dataset_inputs).toEqual([
          {
            tags: [{ key: 'mlflow.data.context', value: 'training' }],
            dataset: { name: 'iris', digest: 'abc123', source_type: 'local', source: '{"uri": "/tmp/iris.csv"}', schema: '{}' },
          },
        ]);
        const summaries = await t.post('experiments/search-datasets', { experiment_ids: [exp] });
        expect(summaries.body.dataset_summaries).toEqual([{ experiment_id: exp, name: 'iris', digest: 'abc123', context: 'training' }]);
      });

      it('answers a whole run byte for byte as JSON.stringify writes it: field order, escapes, every double', async () => {
        // The database writes runs/get and runs/search answers (runs/load.ts): the text must be the one
        // JSON.stringify gives for the run written out here in MLflow's field order.
        const exp = (await t.post('experiments/create', { name: 'bytes' })).body.experiment_id;
        const odd = 'quote " backslash \\ newline \n tab \t bell \u0007 del \u007f é 日本 🚀 \u2028 </script>';
        const run = await newRun(exp, { run_name: 'bytes-run', start_time: 1_700_000_000_123 });
        const id = run.info.run_id;
        // At and around each edge of fixed and exponent notation, both signs, the extremes, and the strings.
        const values = [
          0, -0, 1, -1, 0.1, 123.456, 1e-4, 9.999999999999999e-5, 1.5e-5, -1e-6, 1e-7, 2.5e-300, 5e-324, 123456789012345.67,
          999999999999999.9, 1e15, -1.2345e16, 70953660111773020, 2.023153215867568e18, 1e20, 1e21, -1.5e21, 1.7976931348623157e308,
        ];
        const points = values.map((value, i) => ({
          key: `m${String(i).padStart(2, '0')}`,
          value,
          timestamp: 1_700_000_000_000 + i,
          step: i,
        }));
        const strings = [
          { key: 'nan', value: 'NaN', timestamp: 5, step: 2 ** 40 },
          { key: 'pinf', value: 'Infinity', timestamp: 5, step: 0 },
          { key: 'ninf', value: '-Infinity', timestamp: 5, step: -3 },
        ];
        const batch = await t.post('runs/log-batch', {
          run_id: id,
          metrics: [...points, ...strings],
          params: [{ key: 'odd', value: odd }],
          tags: [{ key: 'odd tag', value: odd }],
        });
        expect(batch.status, batch.text).toBe(200);
        const inputs = await t.post('runs/log-inputs', {
          run_id: id,
          datasets: [
            {
              tags: [
                { key: 'mlflow.data.context', value: 'training' },
                { key: 'b', value: odd },
              ],
              dataset: { name: 'b-set', digest: 'd2', source_type: 'local', source: odd, schema: '{"a": 1}', profile: '{"rows": 3}' },
            },
            { tags: [], dataset: { name: 'a-set', digest: 'd1', source_type: 'http', source: 'https://x/y' } },
          ],
          models: [{ model_id: 'm-2' }, { model_id: 'm-1' }],
        });
        expect(inputs.status, inputs.text).toBe(200);
        const output = await t.post('runs/outputs', { run_id: id, models: [{ model_id: 'm-9', step: 7 }] });
        expect(output.status, output.text).toBe(200);
        await t.post('runs/update', { run_id: id, status: 'FINISHED', end_time: 1_700_000_009_999 });

        const metrics = [...points, ...strings].sort((a, b) => (a.key < b.key ? -1 : 1));
        const expected = {
          info: {
            run_id: id,
            run_uuid: id,
            run_name: 'bytes-run',
            experiment_id: exp,
            user_id: '',
            status: 'FINISHED',
            start_time: 1_700_000_000_123,
            end_time: 1_700_000_009_999,
            artifact_uri: run.info.artifact_uri,
            lifecycle_stage: 'active',
          },
          data: {
            metrics,
            params: [{ key: 'odd', value: odd }],
            tags: [
              { key: 'mlflow.runName', value: 'bytes-run' },
              { key: 'odd tag', value: odd },
            ],
          },
          inputs: {
            dataset_inputs: [
              { dataset: { name: 'a-set', digest: 'd1', source_type: 'http', source: 'https://x/y' } },
              {
                tags: [
                  { key: 'b', value: odd },
                  { key: 'mlflow.data.context', value: 'training' },
                ],
                dataset: { name: 'b-set', digest: 'd2', source_type: 'local', source: odd, schema: '{"a": 1}', profile: '{"rows": 3}' },
              },
            ],
            model_inputs: [{ model_id: 'm-1' }, { model_id: 'm-2' }],
          },
          outputs: { model_outputs: [{ model_id: 'm-9', step: 7 }] },
        };
        const got = await t.get('runs/get', { run_id: id });
        expect(got.status, got.text).toBe(200);
        expect(got.text).toBe(JSON.stringify({ run: expected }));
        const found = await t.post('runs/search', { experiment_ids: [exp], order_by: ['metrics.m05 DESC'] });
        expect(found.text).toBe(JSON.stringify({ runs: [expected] }));
        const none = await t.post('runs/search', { experiment_ids: [exp], filter: "params.odd = 'other'" });
        expect(none.text).toBe('{}');
        expect((await t.get('runs/get', { run_id: 'f'.repeat(32) })).status).toBe(404);
      });

      it('pages a search ordered by a metric in MLflow order across the NaN runs and the runs without it', async () => {
        // 10 runs with a value (ties, infinities), 8 with NaN, 12 without the metric; start times tie in fours. The
        // expected order is computed here from MLflow's rule, not read from the server: values in the asked
        // direction, then NaN, then missing, in both directions; ties by the next key, start_time DESC, run_id.
        const exp = (await t.post('experiments/create', { name: 'ordered-pages' })).body.experiment_id;
        const values = [3, 1, 'Infinity', 3, 0, '-Infinity', 1, 3, 2, 0];
        const runs: { id: string; start: number; value: number | 'NaN' | undefined; p: string }[] = [];
        for (let i = 0; i < 30; i++) {
          const value = i < 10 ? values[i] : i < 18 ? 'NaN' : undefined;
          const run = {
            id: (await newRun(exp, { start_time: 1000 + (i % 4) })).info.run_id,
            start: 1000 + (i % 4),
            p: 'xyz'[i % 3]!,
            value,
          };
          const metrics = value === undefined ? [] : [{ key: 'score', value, timestamp: 1, step: 0 }];
          expect((await t.post('runs/log-batch', { run_id: run.id, metrics, params: [{ key: 'p', value: run.p }] })).status).toBe(200);
          runs.push({
            ...run,
            value: typeof value === 'string' && value !== 'NaN' ? Number(value) : (value as number | 'NaN' | undefined),
          });
        }
        const rank = (v: (typeof runs)[number]['value']) => (v === undefined ? 2 : v === 'NaN' ? 1 : 0);
        const expected = (descending: boolean, byParam: boolean) =>
          [...runs]
            .sort(
              (a, b) =>
                rank(a.value) - rank(b.value) ||
                (rank(a.value) === 0 ? ((a.value as number) - (b.value as number)) * (descending ? -1 : 1) || 0 : 0) ||
                (byParam ? a.p.localeCompare(b.p) : 0) ||
                b.start - a.start ||
                (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
            )
            .map((r) => r.id);
        for (const [orderBy, want] of [
          [['metrics.score DESC'], expected(true, false)],
          [['metrics.score ASC'], expected(false, false)],
          [['metrics.score DESC', 'params.p ASC'], expected(true, true)],
        ] as const) {
          // Page sizes whose boundaries fall among the NaN runs (positions 10 to 17) and among the missing ones.
          for (const size of [4, 7, 13, 30]) {
            const pages: string[][] = [];
            let token: string | undefined;
            do {
              const res = await t.post('runs/search', {
                experiment_ids: [exp],
                order_by: orderBy,
                max_results: size,
                ...(token ? { page_token: token } : {}),
              });
              expect(res.status, res.text).toBe(200);
              pages.push((res.body.runs ?? []).map((r: { info: { run_id: string } }) => r.info.run_id));
              token = res.body.next_page_token;
            } while (token);
            expect(pages.flat(), `${orderBy} in pages of ${size}`).toEqual(want);
            expect(pages.length).toBe(Math.ceil(30 / size));
          }
        }
      });
    });

    describe('logged models', () => {
      it('goes through what mlflow.sklearn.log_model does: create, outputs, metrics with model_id, finalize, tags', async () => {
        const exp = (await t.post('experiments/create', { name: 'models' })).body.experiment_id;
        const run = await newRun(exp);
        const id = run.info.run_id;
        await t.post('runs/log-metric', { run_id: id, key: 'acc', value: 0.9, timestamp: 5, step: 0 });

        const created = await t.post('logged-models', {
          experiment_id: exp,
          name: 'model',
          source_run_id: id,
          model_type: 'sklearn',
          params: [{ key: 'C', value: '1.0' }],
          tags: [{ key: 'mlflow.source.name', value: 'train.py' }],
        });
        expect(created.status, created.text).toBe(200);
        const model = created.body.model;
        expect(model.info).toMatchObject({
          experiment_id: exp,
          name: 'model',
          status: 'LOGGED_MODEL_PENDING',
          source_run_id: id,
          artifact_uri: `mlflow-artifacts:/${exp}/models/${model.info.model_id}/artifacts`,
        });
        expect(model.info.model_id).toMatch(/^m-[0-9a-f]{32}$/);

        expect((await t.post('runs/outputs', { run_id: id, models: [{ model_id: model.info.model_id, step: 0 }] })).status).toBe(200);
        await t.post('runs/log-batch', {
          run_id: id,
          metrics: [{ key: 'acc', value: 0.9, timestamp: 5, step: 0, model_id: model.info.model_id }],
        });

        const done = await t.call('PATCH', `logged-models/${model.info.model_id}`, {
          model_id: model.info.model_id,
          status: 'LOGGED_MODEL_READY',
        });
        expect(done.body.model.info.status).toBe('LOGGED_MODEL_READY');

        await t.call('PATCH', `logged-models/${model.info.model_id}/tags`, { tags: [{ key: 'mlflow.model.flavor', value: 'sklearn' }] });
        await t.post(`logged-models/${model.info.model_id}/params`, { params: [{ key: 'max_iter', value: '100' }] });
        const got = (await t.get(`logged-models/${model.info.model_id}`)).body.model;
        expect(got.info.tags).toEqual(expect.arrayContaining([{ key: 'mlflow.model.flavor', value: 'sklearn' }]));
        expect(got.data.params).toEqual([
          { key: 'C', value: '1.0' },
          { key: 'max_iter', value: '100' },
        ]);
        expect(got.data.metrics).toEqual([{ key: 'acc', value: 0.9, timestamp: 5, step: 0, run_id: id, model_id: model.info.model_id }]);

        const runAfter = (await t.get('runs/get', { run_id: id })).body.run;
        expect(runAfter.outputs.model_outputs).toEqual([{ model_id: model.info.model_id, step: 0 }]);
        const history = (await t.get('metrics/get-history', { run_id: id, metric_key: 'acc' })).body.metrics;
        expect(history).toHaveLength(1);

        expect((await t.call('DELETE', `logged-models/${model.info.model_id}/tags/mlflow.model.flavor`)).status).toBe(200);
        expect((await t.call('DELETE', `logged-models/${model.info.model_id}`)).status).toBe(200);
        const gone = await t.get(`logged-models/${model.info.model_id}`);
        expect(gone.status).toBe(404);
        expect(gone.body.message).toBe(`Logged model with ID '${model.info.model_id}' not found.`);
      });

      it('searches logged models through the search grammar, in its order, with the datasets argument', async () => {
        const exp = (await t.post('experiments/create', { name: 'model-search' })).body.experiment_id;
        const run = (await newRun(exp)).info.run_id;
        const ids: string[] = [];
        for (const [i, name] of ['a', 'b', 'c'].entries()) {
          const id = (await t.post('logged-models', { experiment_id: exp, name, source_run_id: run })).body.model.info.model_id;
          ids.push(id);
          await t.post('runs/log-batch', {
            run_id: run,
            metrics: [{ key: 'acc', value: i / 10, timestamp: 1, step: 0, model_id: id, dataset_name: 'eval', dataset_digest: 'd1' }],
          });
        }
        const res = await t.post('logged-models/search', {
          experiment_ids: [exp],
          filter: 'metrics.acc >= 0.1',
          datasets: [{ dataset_name: 'eval' }],
          order_by: [{ field_name: 'metrics.acc', ascending: false }],
          max_results: 10,
        });
        expect(res.status, res.text).toBe(200);
        expect(res.body.models.map((m: { info: { name: string } }) => m.info.name)).toEqual(['c', 'b']);
        expect(res.body.models[0].data.metrics[0]).toMatchObject({ key: 'acc', dataset_name: 'eval', dataset_digest: 'd1' });
        const none = await t.post('logged-models/search', {
          experiment_ids: [exp],
          datasets: [{ dataset_name: 'other' }],
          filter: 'metrics.acc > 0',
        });
        expect(none.body.models).toBeUndefined();
      });

      it("lists and serves a logged model's files uploaded through the artifact proxy", async () => {
        const exp = (await t.post('experiments/create', { name: 'model-files' })).body.experiment_id;
        const model = (await t.post('logged-models', { experiment_id: exp, name: 'm' })).body.model;
        const key = model.info.artifact_uri.replace('mlflow-artifacts:/', '');
        const put = await t.call('PUT', `/api/2.0/mlflow-artifacts/artifacts/${key}/MLmodel`, 'flavors: {}\n');
        expect(put.status, put.text).toBe(200);
        const listed = await t.get(`logged-models/${model.info.model_id}/artifacts/directories`);
        expect(listed.body).toMatchObject({ root_uri: model.info.artifact_uri, files: [{ path: 'MLmodel', is_dir: false }] });
        const file = await t.get(`logged-models/${model.info.model_id}/artifacts/files`, { artifact_file_path: 'MLmodel' });
        expect(file.text).toBe('flavors: {}\n');
      });

      it('records runs/log-model in the run history tag', async () => {
        const id = (await newRun()).info.run_id;
        await t.post('runs/log-model', { run_id: id, model_json: JSON.stringify({ artifact_path: 'model' }) });
        await t.post('runs/log-model', { run_id: id, model_json: JSON.stringify({ artifact_path: 'model2' }) });
        const tags = (await t.get('runs/get', { run_id: id })).body.run.data.tags;
        const history = tags.find((x: { key: string }) => x.key === 'mlflow.log-model.history');
        expect(JSON.parse(history.value)).toEqual([{ artifact_path: 'model' }, { artifact_path: 'model2' }]);
      });
    });
  });
}
