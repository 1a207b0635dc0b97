import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// A default artifact root configured as a file:// URI is honoured as MLflow honours it: experiments and runs get
// file:// locations that clients on the server's file system use directly, and a model version may name a local
// path inside its run's folder (nowhere else).
describe('tracker with a file:// artifact root', () => {
  let t: TrackerHarness;
  let folder: string;
  let root: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'tracker-file-root-'));
    root = pathToFileURL(folder).href;
    t = await trackerHarness({ env: { TRACKER_ARTIFACT_ROOT: root } });
  });
  afterAll(async () => {
    await t?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('places experiments and runs under the root as file:// URIs; a relative location becomes absolute', async () => {
    const id = (await t.post('experiments/create', { name: 'files' })).body.experiment_id;
    const experiment = (await t.get('experiments/get', { experiment_id: id })).body.experiment;
    expect(experiment.artifact_location).toBe(`${root}/${id}`);
    const run = (await t.post('runs/create', { experiment_id: id })).body.run;
    expect(run.info.artifact_uri).toBe(`${root}/${id}/${run.info.run_id}/artifacts`);

    const relative = (await t.post('experiments/create', { name: 'relative', artifact_location: 'my_location' })).body.experiment_id;
    expect((await t.get('experiments/get', { experiment_id: relative })).body.experiment.artifact_location).toBe(resolve('my_location'));
  });

  it('registers a local source inside the run folder, and refuses one outside it or without its run', async () => {
    const id = (await t.post('experiments/create', { name: 'local-sources' })).body.experiment_id;
    const run = (await t.post('runs/create', { experiment_id: id })).body.run.info;
    await t.post('registered-models/create', { name: 'local' });
    const create = (source: string, extra: Record<string, unknown> = { run_id: run.run_id }) =>
      t.post('model-versions/create', { name: 'local', source, ...extra });
    for (const source of [
      run.artifact_uri,
      `${run.artifact_uri}/model`,
      `${run.artifact_uri}/model/..`,
      run.artifact_uri.slice('file://'.length),
    ]) {
      const res = await create(source);
      expect(res.status, `${source}: ${res.text}`).toBe(200);
    }
    for (const [source, extra] of [
      [run.artifact_uri, {}],
      ['/tmp', { run_id: run.run_id }],
      [`${run.artifact_uri}/../../other`, { run_id: run.run_id }],
      ['file://somehost/path/to/source', { run_id: run.run_id }],
    ] as const) {
      const res = await create(source, extra);
      expect(res.status, source).toBe(400);
      expect(res.body.message).toContain('To use a local path as a model version source');
    }
  });

  it("notes a registered logged model's versions in MLflow's JSON spelling", async () => {
    const id = (await t.post('experiments/create', { name: 'noted' })).body.experiment_id;
    const model = (await t.post('logged-models', { experiment_id: id, name: 'm' })).body.model.info;
    await t.post('registered-models/create', { name: 'noted' });
    expect(
      (await t.post('model-versions/create', { name: 'noted', source: `models:/${model.model_id}`, model_id: model.model_id })).status,
    ).toBe(200);
    // A logged model's own file:// location is a local source inside its folder.
    const local = await t.post('model-versions/create', { name: 'noted', source: model.artifact_uri, model_id: model.model_id });
    expect(local.status, local.text).toBe(200);
    const tags = (await t.get(`logged-models/${model.model_id}`)).body.model.info.tags;
    expect(tags).toContainEqual({
      key: 'mlflow.modelVersions',
      value: '[{"name": "noted", "version": 1}, {"name": "noted", "version": 2}]',
    });
  });
});
