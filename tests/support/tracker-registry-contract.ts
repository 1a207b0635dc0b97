import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/platform/db/index.ts';
import { API_PREFIXES } from '../../src/tracker/app.ts';
import { trackerHarness, type TrackerHarness } from './tracker.ts';

// The model registry through HTTP, as the MLflow client calls it; run on PGlite (unit) and on Postgres
// (integration), where concurrent requests really run side by side on a pool of connections.
// One database per file (starting one is the slow part); every test starts from empty registry tables.
export function trackerRegistryContract(name: string, open: () => Promise<{ db: Database; cleanup(): Promise<void> }>) {
  describe(`tracker registry (${name})`, () => {
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
    beforeEach(async () => {
      await t.db.exec(`TRUNCATE tracker_registered_models, tracker_logged_models, tracker_runs CASCADE`);
    });

    type Reply = { status: number; body: any };

    async function call(method: string, path: string, message?: Record<string, unknown>, prefix = '/api/2.0/mlflow'): Promise<Reply> {
      let url = `${prefix}${path}`;
      const init: RequestInit = { method };
      if (message && method === 'GET') {
        const q = new URLSearchParams();
        for (const [k, v] of Object.entries(message)) for (const one of Array.isArray(v) ? v : [v]) q.append(k, String(one));
        url += `?${q}`;
      } else if (message) {
        init.body = JSON.stringify(message);
        init.headers = { 'Content-Type': 'application/json' };
      }
      const res = await t.app.request(url, init);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    }

    const ok = async (method: string, path: string, message?: Record<string, unknown>) => {
      const r = await call(method, path, message);
      expect(r, `${method} ${path}`).toMatchObject({ status: 200 });
      return r.body;
    };

    async function addRun(runId: string, experimentId = 0): Promise<string> {
      const uri = `mlflow-artifacts:/${experimentId}/${runId}/artifacts`;
      await t.db.query(`INSERT INTO tracker_runs (run_id, experiment_id, start_time, artifact_uri) VALUES ($1, $2, 1, $3)`, [
        runId,
        experimentId,
        uri,
      ]);
      return uri;
    }

    async function addLoggedModel(modelId: string, runId: string | null): Promise<string> {
      const location = `mlflow-artifacts:/0/models/${modelId}/artifacts`;
      await t.db.query(
        `INSERT INTO tracker_logged_models (model_id, experiment_id, name, artifact_location, creation_time, last_updated_time, source_run_id)
         VALUES ($1, 0, 'model', $2, 1, 1, $3)`,
        [modelId, location, runId],
      );
      return location;
    }

    const version = (name: string, source: string, extra: Record<string, unknown> = {}) =>
      ok('POST', '/model-versions/create', { name, source, ...extra }).then((b) => b.model_version);

    describe('registered models', () => {
      it('creates, reads, updates, renames and deletes one', async () => {
        const created = await ok('POST', '/registered-models/create', {
          name: 'iris',
          description: 'flowers',
          tags: [{ key: 'team', value: 'ds' }],
        });
        expect(created.registered_model).toMatchObject({
          name: 'iris',
          description: 'flowers',
          tags: [{ key: 'team', value: 'ds' }],
          aliases: [],
          latest_versions: [],
        });
        expect(typeof created.registered_model.creation_timestamp).toBe('number');

        const got = await ok('GET', '/registered-models/get', { name: 'iris' });
        expect(got.registered_model).toEqual(created.registered_model);

        const updated = await ok('PATCH', '/registered-models/update', { name: 'iris', description: 'irises' });
        expect(updated.registered_model.description).toBe('irises');

        await addRun('r1');
        await version('iris', 'runs:/r1/model', { run_id: 'r1' });
        await ok('POST', '/registered-models/alias', { name: 'iris', alias: 'champion', version: '1' });
        const renamed = await ok('POST', '/registered-models/rename', { name: 'iris', new_name: 'iris-v2' });
        expect(renamed.registered_model).toMatchObject({
          name: 'iris-v2',
          aliases: [{ alias: 'champion', version: '1' }],
          tags: [{ key: 'team', value: 'ds' }],
        });
        expect(renamed.registered_model.latest_versions).toMatchObject([{ name: 'iris-v2', version: '1', aliases: ['champion'] }]);
        expect((await call('GET', '/registered-models/get', { name: 'iris' })).status).toBe(404);

        await ok('DELETE', '/registered-models/delete', { name: 'iris-v2' });
        expect(await call('GET', '/registered-models/get', { name: 'iris-v2' })).toMatchObject({
          status: 404,
          body: { error_code: 'RESOURCE_DOES_NOT_EXIST' },
        });
        expect(await call('GET', '/model-versions/get', { name: 'iris-v2', version: '1' })).toMatchObject({ status: 404 });
      });

      it('refuses a duplicate name with RESOURCE_ALREADY_EXISTS, which register_model relies on', async () => {
        await ok('POST', '/registered-models/create', { name: 'dup' });
        expect(await call('POST', '/registered-models/create', { name: 'dup' })).toMatchObject({
          status: 400,
          body: { error_code: 'RESOURCE_ALREADY_EXISTS', message: 'Registered Model (name=dup) already exists.' },
        });
        await ok('POST', '/registered-models/create', { name: 'other' });
        expect(await call('POST', '/registered-models/rename', { name: 'other', new_name: 'dup' })).toMatchObject({
          status: 400,
          body: { error_code: 'RESOURCE_ALREADY_EXISTS' },
        });
      });

      it.each([
        ['POST', '/registered-models/create', { name: 'a/b' }, 400, 'INVALID_PARAMETER_VALUE'],
        ['POST', '/registered-models/create', { name: 'a:b' }, 400, 'INVALID_PARAMETER_VALUE'],
        ['POST', '/registered-models/create', { name: '' }, 400, 'INVALID_PARAMETER_VALUE'],
        ['POST', '/registered-models/create', {}, 400, 'INVALID_PARAMETER_VALUE'],
        ['POST', '/registered-models/create', { name: 'x', tags: [{ key: '', value: 'v' }] }, 400, 'INVALID_PARAMETER_VALUE'],
        ['POST', '/registered-models/create', { name: '..' }, 400, 'INVALID_PARAMETER_VALUE'],
        ['GET', '/registered-models/get', { name: 'missing' }, 404, 'RESOURCE_DOES_NOT_EXIST'],
        ['PATCH', '/registered-models/update', { name: 'missing', description: 'x' }, 404, 'RESOURCE_DOES_NOT_EXIST'],
        ['POST', '/registered-models/rename', { name: 'missing', new_name: 'x' }, 404, 'RESOURCE_DOES_NOT_EXIST'],
        ['DELETE', '/registered-models/delete', { name: 'missing' }, 404, 'RESOURCE_DOES_NOT_EXIST'],
        ['POST', '/registered-models/set-tag', { name: 'missing', key: 'k', value: 'v' }, 404, 'RESOURCE_DOES_NOT_EXIST'],
        ['POST', '/registered-models/get-latest-versions', { name: 'missing' }, 404, 'RESOURCE_DOES_NOT_EXIST'],
        ['GET', '/registered-models/alias', { name: 'missing', alias: 'a' }, 404, 'RESOURCE_DOES_NOT_EXIST'],
        ['POST', '/model-versions/create', { name: 'missing', source: 's3://b/m' }, 404, 'RESOURCE_DOES_NOT_EXIST'],
        ['GET', '/model-versions/get', { name: 'missing', version: '1' }, 404, 'RESOURCE_DOES_NOT_EXIST'],
        ['GET', '/model-versions/get', { name: 'missing', version: 'one' }, 400, 'INVALID_PARAMETER_VALUE'],
        ['GET', '/model-versions/get-download-uri', { name: 'missing', version: '1' }, 404, 'RESOURCE_DOES_NOT_EXIST'],
      ])('%s %s %j answers %i %s', async (method, path, message, status, code) => {
        expect(await call(method, path, message)).toMatchObject({ status, body: { error_code: code } });
      });

      it('sets and deletes tags, from a JSON body or a query string', async () => {
        await ok('POST', '/registered-models/create', { name: 'm' });
        await ok('POST', '/registered-models/set-tag', { name: 'm', key: 'k1', value: 'v1' });
        await ok('POST', '/registered-models/set-tag', { name: 'm', key: 'k1', value: 'v2' });
        await ok('POST', '/registered-models/set-tag', { name: 'm', key: 'k2', value: 'x' });
        expect((await ok('GET', '/registered-models/get', { name: 'm' })).registered_model.tags).toEqual([
          { key: 'k1', value: 'v2' },
          { key: 'k2', value: 'x' },
        ]);
        await ok('DELETE', '/registered-models/delete-tag', { name: 'm', key: 'k1' });
        const res = await t.app.request('/api/2.0/mlflow/registered-models/delete-tag?name=m&key=k2', { method: 'DELETE' });
        expect(res.status).toBe(200);
        expect((await ok('GET', '/registered-models/get', { name: 'm' })).registered_model.tags).toEqual([]);
      });

      it('answers under every API prefix', async () => {
        await ok('POST', '/registered-models/create', { name: 'everywhere' });
        for (const prefix of API_PREFIXES) {
          const r = await call('GET', '/registered-models/get', { name: 'everywhere' }, prefix);
          expect(r, prefix).toMatchObject({ status: 200, body: { registered_model: { name: 'everywhere' } } });
        }
      });
    });

    describe('model versions', () => {
      beforeEach(async () => {
        await ok('POST', '/registered-models/create', { name: 'clf' });
      });

      it('numbers versions per name and resolves runs:/ sources to the run artifacts behind the proxy', async () => {
        const runUri = await addRun('run-a');
        const v1 = await version('clf', 'runs:/run-a/model', { run_id: 'run-a', description: 'first', tags: [{ key: 'k', value: 'v' }] });
        expect(v1).toMatchObject({
          name: 'clf',
          version: '1',
          current_stage: 'None',
          status: 'READY',
          source: 'runs:/run-a/model',
          run_id: 'run-a',
          description: 'first',
          tags: [{ key: 'k', value: 'v' }],
          aliases: [],
        });
        expect(await ok('GET', '/model-versions/get-download-uri', { name: 'clf', version: '1' })).toEqual({
          artifact_uri: `${runUri}/model`,
        });

        await ok('POST', '/registered-models/create', { name: 'other' });
        expect((await version('other', 'runs:/run-a/model')).version).toBe('1');
        expect((await version('clf', `${runUri}/model`, { run_id: 'run-a' })).version).toBe('2');
      });

      it('takes a runs:/ source whose run is not on this server as given, as MLflow does (migrations)', async () => {
        const v = await version('clf', 'runs:/elsewhere/model', { run_id: 'elsewhere' });
        expect(v).toMatchObject({ version: '1', source: 'runs:/elsewhere/model', run_id: 'elsewhere' });
        expect(await ok('GET', '/model-versions/get-download-uri', { name: 'clf', version: '1' })).toEqual({
          artifact_uri: 'runs:/elsewhere/model',
        });
        expect((await version('clf', 'runs:/elsewhere/model')).run_id).toBe('elsewhere');
        expect((await call('POST', '/model-versions/create', { name: 'clf', source: 'runs:/elsewhere/../x' })).status).toBe(400);
        // The run_id sent with it must be the source's run (MLflow's words).
        expect(
          await call('POST', '/model-versions/create', { name: 'clf', source: 'runs:/elsewhere/model', run_id: 'run_id_1' }),
        ).toMatchObject({
          status: 400,
          body: {
            message:
              "Invalid model version source: 'runs:/elsewhere/model'. The run_id request parameter must identify the resource that contains the source.",
          },
        });
      });

      it('registers a 3.x logged model (models:/<model_id>) at its artifact location and notes the version on it', async () => {
        await addRun('run-b');
        const location = await addLoggedModel('m-123', 'run-b');
        const v = await version('clf', 'models:/m-123', { model_id: 'm-123' });
        expect(v).toMatchObject({ version: '1', source: 'models:/m-123', model_id: 'm-123', run_id: 'run-b' });
        expect((await ok('GET', '/model-versions/get-download-uri', { name: 'clf', version: '1' })).artifact_uri).toBe(location);
        const [tag] = await t.db.query<{ value: string }>(
          `SELECT value FROM tracker_logged_model_tags WHERE model_id = 'm-123' AND key = 'mlflow.modelVersions'`,
        );
        expect(JSON.parse(tag!.value)).toEqual([{ name: 'clf', version: 1 }]);

        // models:/<name>/<version|stage|alias> copies another version's location.
        await ok('POST', '/registered-models/create', { name: 'copy' });
        const copied = await version('copy', 'models:/clf/1');
        expect(copied).toMatchObject({ source: 'models:/clf/1', model_id: 'm-123', run_id: 'run-b' });
        expect((await ok('GET', '/model-versions/get-download-uri', { name: 'copy', version: '1' })).artifact_uri).toBe(location);
        await ok('POST', '/registered-models/alias', { name: 'clf', alias: 'best', version: '1' });
        expect((await version('copy', 'models:/clf@best')).source).toBe('models:/clf/1');
      });

      it.each([
        ['a source outside the run', 'mlflow-artifacts:/0/run-other/artifacts/model', { run_id: 'run-c' }],
        ['a proxied source without its run', 'mlflow-artifacts:/0/run-c/artifacts/model', {}],
        ['a relative path', 'mlflow-artifacts:/0/run-c/artifacts/../../run-other/artifacts', { run_id: 'run-c' }],
        ['an encoded relative path', 'mlflow-artifacts:/0/run-c/artifacts/%2e%2e/x', { run_id: 'run-c' }],
        ['a local path', '/etc/model', {}],
        ['a file URI', 'file:///etc/model', {}],
        ['a local path beside a run whose artifacts are behind the proxy', '/etc/model', { run_id: 'run-c' }],
        ['a run that does not contain the source', 'runs:/run-c/model', { run_id: 'run-x' }],
        ['an unknown logged model', 'models:/m-missing', { model_id: 'm-missing' }],
        ['a logged model other than model_id', 'models:/m-1', { model_id: 'm-2' }],
      ])('refuses %s', async (_what, source, extra) => {
        await addRun('run-c');
        await addLoggedModel('m-1', 'run-c');
        await addLoggedModel('m-2', 'run-c');
        expect(await call('POST', '/model-versions/create', { name: 'clf', source, ...extra })).toMatchObject({
          status: 400,
          body: { error_code: 'INVALID_PARAMETER_VALUE' },
        });
      });

      it('updates, tags, deletes, and never reuses a deleted number', async () => {
        await addRun('run-e');
        await version('clf', 'runs:/run-e/model');
        await version('clf', 'runs:/run-e/model');
        expect(
          (await ok('PATCH', '/model-versions/update', { name: 'clf', version: '1', description: 'tuned' })).model_version.description,
        ).toBe('tuned');
        await ok('POST', '/model-versions/set-tag', { name: 'clf', version: '1', key: 'q', value: 'good' });
        await ok('POST', '/model-versions/set-tag', { name: 'clf', version: '1', key: 'r', value: 'x' });
        await ok('DELETE', '/model-versions/delete-tag', { name: 'clf', version: '1', key: 'r' });
        expect((await ok('GET', '/model-versions/get', { name: 'clf', version: '1' })).model_version.tags).toEqual([
          { key: 'q', value: 'good' },
        ]);

        await ok('POST', '/registered-models/alias', { name: 'clf', alias: 'old', version: '2' });
        await ok('DELETE', '/model-versions/delete', { name: 'clf', version: '2' });
        expect(await call('GET', '/model-versions/get', { name: 'clf', version: '2' })).toMatchObject({
          status: 404,
          body: { error_code: 'RESOURCE_DOES_NOT_EXIST' },
        });
        expect((await ok('GET', '/registered-models/get', { name: 'clf' })).registered_model.aliases).toEqual([]);
        expect((await version('clf', 'runs:/run-e/model')).version).toBe('3');
        expect(await call('DELETE', '/model-versions/delete', { name: 'clf', version: '2' })).toMatchObject({ status: 404 });
      });
    });

    describe('stages', () => {
      beforeEach(async () => {
        await ok('POST', '/registered-models/create', { name: 'st' });
        await addRun('run-s');
        for (let i = 0; i < 4; i++) await version('st', 'runs:/run-s/model');
      });

      const stageOf = async (v: string) => (await ok('GET', '/model-versions/get', { name: 'st', version: v })).model_version.current_stage;
      const transition = (v: string, stage: string, archive?: boolean) =>
        call('POST', '/model-versions/transition-stage', {
          name: 'st',
          version: v,
          stage,
          ...(archive === undefined ? {} : { archive_existing_versions: archive }),
        });

      it('moves versions between stages with MLflow spellings, and archives the others on request', async () => {
        expect((await transition('1', 'production', false)).body.model_version.current_stage).toBe('Production');
        expect((await transition('2', 'STAGING')).body.model_version.current_stage).toBe('Staging');
        expect((await transition('3', 'Production', false)).status).toBe(200);
        expect([await stageOf('1'), await stageOf('3')]).toEqual(['Production', 'Production']);

        const moved = await transition('4', 'Production', true);
        expect(moved).toMatchObject({ status: 200, body: { model_version: { version: '4', current_stage: 'Production' } } });
        expect([await stageOf('1'), await stageOf('2'), await stageOf('3'), await stageOf('4')]).toEqual([
          'Archived',
          'Staging',
          'Archived',
          'Production',
        ]);

        const latest = await ok('POST', '/registered-models/get-latest-versions', { name: 'st', stages: ['production'] });
        expect(latest.model_versions.map((v: any) => v.version)).toEqual(['4']);
        const viaGet = await ok('GET', '/registered-models/get-latest-versions', { name: 'st', stages: ['Staging', 'Production'] });
        expect(viaGet.model_versions.map((v: any) => [v.version, v.current_stage])).toEqual([
          ['2', 'Staging'],
          ['4', 'Production'],
        ]);
        const all = await ok('POST', '/registered-models/get-latest-versions', { name: 'st' });
        expect(all.model_versions.map((v: any) => v.current_stage).sort()).toEqual(['Archived', 'Production', 'Staging']);
        const model = (await ok('GET', '/registered-models/get', { name: 'st' })).registered_model;
        expect(model.latest_versions.map((v: any) => [v.version, v.current_stage])).toEqual([
          ['2', 'Staging'],
          ['3', 'Archived'],
          ['4', 'Production'],
        ]);

        expect((await transition('4', 'None')).body.model_version.current_stage).toBe('None');
      });

      it.each([
        ['an unknown stage', 'Prod', undefined],
        ['archiving towards a stage that is not active', 'Archived', true],
      ])('refuses %s', async (_what, stage, archive) => {
        expect(await transition('1', stage, archive)).toMatchObject({ status: 400, body: { error_code: 'INVALID_PARAMETER_VALUE' } });
        expect(await stageOf('1')).toBe('None');
      });

      it('answers 404 for a missing version', async () => {
        expect(await transition('9', 'Staging')).toMatchObject({ status: 404, body: { error_code: 'RESOURCE_DOES_NOT_EXIST' } });
      });
    });

    describe('aliases', () => {
      beforeEach(async () => {
        await ok('POST', '/registered-models/create', { name: 'al' });
        await addRun('run-al');
        for (let i = 0; i < 3; i++) await version('al', 'runs:/run-al/model');
      });

      it('sets, moves, reads and deletes an alias', async () => {
        await ok('POST', '/registered-models/alias', { name: 'al', alias: 'champion', version: '1' });
        await ok('POST', '/registered-models/alias', { name: 'al', alias: 'champion', version: '2' });
        await ok('POST', '/registered-models/alias', { name: 'al', alias: 'challenger', version: '2' });
        const byAlias = await ok('GET', '/registered-models/alias', { name: 'al', alias: 'champion' });
        expect(byAlias.model_version).toMatchObject({ version: '2', aliases: ['challenger', 'champion'] });
        expect((await ok('GET', '/registered-models/get', { name: 'al' })).registered_model.aliases).toEqual([
          { alias: 'challenger', version: '2' },
          { alias: 'champion', version: '2' },
        ]);
        expect((await ok('GET', '/registered-models/alias', { name: 'al', alias: 'latest' })).model_version.version).toBe('3');

        await ok('DELETE', '/registered-models/alias', { name: 'al', alias: 'champion' });
        const res = await t.app.request('/api/2.0/mlflow/registered-models/alias?name=al&alias=challenger', { method: 'DELETE' });
        expect(res.status).toBe(200);
        expect((await ok('GET', '/model-versions/get', { name: 'al', version: '2' })).model_version.aliases).toEqual([]);
        expect(await call('GET', '/registered-models/alias', { name: 'al', alias: 'champion' })).toMatchObject({
          status: 400,
          body: { error_code: 'INVALID_PARAMETER_VALUE', message: 'Registered model alias champion not found.' },
        });
      });

      it.each([
        ['latest', '1', 400],
        ['v2', '1', 400],
        ['has space', '1', 400],
        ['ok', '7', 404],
        ['ok', 'x', 400],
      ])('refuses alias %j for version %j', async (alias, v, status) => {
        expect((await call('POST', '/registered-models/alias', { name: 'al', alias, version: v })).status).toBe(status);
      });
    });

    describe('search', () => {
      beforeEach(async () => {
        await addRun('run-q');
        for (const name of ['alpha', 'beta', 'gamma']) {
          await ok('POST', '/registered-models/create', { name, tags: [{ key: 'kind', value: name === 'beta' ? 'b' : 'a' }] });
          await version(name, 'runs:/run-q/model', { tags: [{ key: 'n', value: name }] });
          await version(name, 'runs:/run-q/model');
        }
        await ok('POST', '/registered-models/alias', { name: 'beta', alias: 'prod', version: '2' });
      });

      it('finds registered models with their tags, aliases and latest versions, page by page', async () => {
        const first = await ok('GET', '/registered-models/search', { max_results: 2, order_by: 'name DESC' });
        expect(first.registered_models.map((m: any) => m.name)).toEqual(['gamma', 'beta']);
        expect(first.registered_models[1]).toMatchObject({
          aliases: [{ alias: 'prod', version: '2' }],
          tags: [{ key: 'kind', value: 'b' }],
        });
        expect(first.registered_models[1].latest_versions).toMatchObject([{ version: '2', current_stage: 'None', aliases: ['prod'] }]);
        const second = await ok('GET', '/registered-models/search', {
          max_results: 2,
          order_by: 'name DESC',
          page_token: first.next_page_token,
        });
        expect(second.registered_models.map((m: any) => m.name)).toEqual(['alpha']);
        expect(second.next_page_token).toBeUndefined();

        const filtered = await ok('GET', '/registered-models/search', { filter: "tags.kind = 'a' AND name LIKE '%a'" });
        expect(filtered.registered_models.map((m: any) => m.name)).toEqual(['alpha', 'gamma']);
        const neutral = await call('GET', '/registered-models/search', { filter: "name = 'beta'" }, '/api/2.0/tracker');
        expect(neutral.body.registered_models.map((m: any) => m.name)).toEqual(['beta']);
      });

      it('finds model versions with their tags and aliases', async () => {
        const found = await ok('GET', '/model-versions/search', { filter: "name = 'beta'" });
        expect(found.model_versions.map((v: any) => [v.name, v.version])).toEqual([
          ['beta', '2'],
          ['beta', '1'],
        ]);
        expect(found.model_versions[0].aliases).toEqual(['prod']);
        expect(found.model_versions[1].tags).toEqual([{ key: 'n', value: 'beta' }]);
        expect(await call('GET', '/model-versions/search', { filter: 'bogus ~ 1' })).toMatchObject({
          status: 400,
          body: { error_code: 'INVALID_PARAMETER_VALUE' },
        });
      });
    });

    describe('under concurrent requests', () => {
      beforeEach(async () => {
        await addRun('run-race');
      });

      it('lets exactly one of 10 creates of one name win; the others are RESOURCE_ALREADY_EXISTS', async () => {
        const replies = await Promise.all(
          Array.from({ length: 10 }, (_, i) => call('POST', '/registered-models/create', { name: 'race', description: `d${i}` })),
        );
        expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
        const refused = replies.filter((r) => r.status !== 200);
        expect(refused).toHaveLength(9);
        for (const r of refused) {
          expect(r).toMatchObject({
            status: 400,
            body: { error_code: 'RESOURCE_ALREADY_EXISTS', message: 'Registered Model (name=race) already exists.' },
          });
        }
        const found = await ok('GET', '/registered-models/search', { filter: "name = 'race'" });
        expect(found.registered_models).toHaveLength(1);
      });

      it('numbers 40 concurrent versions of one name 1..40, without gap or duplicate', async () => {
        await ok('POST', '/registered-models/create', { name: 'many' });
        const replies = await Promise.all(
          Array.from({ length: 40 }, () =>
            call('POST', '/model-versions/create', { name: 'many', source: 'runs:/run-race/model', run_id: 'run-race' }),
          ),
        );
        for (const r of replies) expect(r, JSON.stringify(r.body)).toMatchObject({ status: 200 });
        const oneToForty = Array.from({ length: 40 }, (_, i) => i + 1);
        expect(replies.map((r) => Number(r.body.model_version.version)).sort((a, b) => a - b)).toEqual(oneToForty);
        const stored = await ok('GET', '/model-versions/search', { filter: "name = 'many'", max_results: 100 });
        expect(stored.model_versions.map((v: any) => Number(v.version)).sort((a: number, b: number) => a - b)).toEqual(oneToForty);
      });

      it('leaves exactly one version in Production after 10 concurrent archiving transitions', async () => {
        await ok('POST', '/registered-models/create', { name: 'prod' });
        for (let i = 0; i < 10; i++) await version('prod', 'runs:/run-race/model');
        const replies = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            call('POST', '/model-versions/transition-stage', {
              name: 'prod',
              version: String(i + 1),
              stage: 'Production',
              archive_existing_versions: true,
            }),
          ),
        );
        for (const r of replies) {
          expect(r, JSON.stringify(r.body)).toMatchObject({ status: 200, body: { model_version: { current_stage: 'Production' } } });
        }
        const stored = await ok('GET', '/model-versions/search', { filter: "name = 'prod'", max_results: 100 });
        const stages = stored.model_versions.map((v: any) => v.current_stage);
        expect(stages.filter((s: string) => s === 'Production')).toHaveLength(1);
        expect(stages.filter((s: string) => s === 'Archived')).toHaveLength(9);
        const latest = await ok('POST', '/registered-models/get-latest-versions', { name: 'prod', stages: ['Production'] });
        expect(latest.model_versions).toHaveLength(1);
      });
    });
  });
}
