import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/platform/db/index.ts';
import { createWasmPolicyEngine } from '../../src/platform/policy/index.ts';
import { trackerHarness, type TrackerHarness } from './tracker.ts';

// MLflow 3's workspaces on the tracker, over HTTP as the client sends them (X-MLFLOW-WORKSPACE), with the
// svc.tracker policy (the wasm build) deciding who may use and manage which workspace. Run on PGlite (unit) and
// on Postgres (integration); one database per file, each test with names of its own.

const ADMIN = { 'X-User-Id': 'ada', 'X-User-Role': 'svc-admin' };
const TEAM_A = { 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst', 'X-User-Groups': 'team-a' };
const TEAM_B = { 'X-User-Id': 'bob', 'X-User-Role': 'svc-analyst', 'X-User-Groups': 'team-b' };
const V3 = '/api/3.0/mlflow';

export function trackerWorkspacesContract(name: string, open: () => Promise<{ db: Database; cleanup(): Promise<void> }>) {
  describe(`tracker workspaces (${name})`, () => {
    let t: TrackerHarness;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      const opened = await open();
      cleanup = opened.cleanup;
      t = await trackerHarness({ db: opened.db, deps: { policy: await createWasmPolicyEngine() } });
      for (const name of ['team-a', 'team-b']) {
        expect((await call('POST', `${V3}/workspaces`, { body: { name }, headers: ADMIN })).status).toBe(201);
      }
    }, 120_000);
    afterAll(async () => {
      await t?.close();
      await cleanup?.();
    });

    async function call(
      method: string,
      path: string,
      opts: { body?: unknown; headers?: Record<string, string>; workspace?: string; raw?: string } = {},
    ) {
      const url = path.startsWith('/') ? path : `/api/2.0/mlflow/${path}`;
      const headers: Record<string, string> = { ...opts.headers, ...(opts.workspace ? { 'X-MLFLOW-WORKSPACE': opts.workspace } : {}) };
      if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
      const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
      const res = await t.app.request(url, { method, headers, ...(body === undefined ? {} : { body }) });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as any) : undefined, text };
    }
    const inA = { headers: TEAM_A, workspace: 'team-a' };
    const inB = { headers: TEAM_B, workspace: 'team-b' };

    it('creates, reads, lists, updates and deletes a workspace as MLflow answers', async () => {
      const created = await call('POST', `${V3}/workspaces`, { body: { name: 'team-crud', description: 'first' }, headers: ADMIN });
      expect(created).toMatchObject({ status: 201, body: { workspace: { name: 'team-crud', description: 'first' } } });
      expect((await call('GET', `${V3}/workspaces/team-crud`, { headers: ADMIN })).body).toEqual({
        workspace: { name: 'team-crud', description: 'first' },
      });
      const updated = await call('PATCH', `${V3}/workspaces/team-crud`, { body: { description: 'second' }, headers: ADMIN });
      expect(updated.body.workspace.description).toBe('second');
      const names = (await call('GET', `${V3}/workspaces`, { headers: ADMIN })).body.workspaces.map((w: { name: string }) => w.name);
      expect(names).toEqual(expect.arrayContaining(['default', 'team-a', 'team-b', 'team-crud']));
      expect((await call('DELETE', `${V3}/workspaces/team-crud`, { headers: ADMIN })).status).toBe(204);
      expect(await call('GET', `${V3}/workspaces/team-crud`, { headers: ADMIN })).toMatchObject({
        status: 404,
        body: { error_code: 'RESOURCE_DOES_NOT_EXIST', message: "Workspace 'team-crud' not found" },
      });
    });

    it.each([
      ['a reserved name', { name: 'default' }, "The 'default' workspace is reserved and cannot be created"],
      ['an upper-case name', { name: 'Team' }, "Workspace name 'Team' must match the pattern"],
      ['a one-letter name', { name: 'a' }, 'must be between 2 and 63 characters'],
      ['a route name', { name: 'api' }, "Workspace name 'api' is reserved and cannot be used."],
    ])('refuses to create a workspace with %s', async (_, body, message) => {
      const res = await call('POST', `${V3}/workspaces`, { body, headers: ADMIN });
      expect(res.status).toBe(400);
      expect(res.body.error_code).toBe('INVALID_PARAMETER_VALUE');
      expect(res.body.message).toContain(message);
    });

    it('keeps a workspace that still holds experiments', async () => {
      await call('POST', `${V3}/workspaces`, { body: { name: 'team-busy' }, headers: ADMIN });
      await call('POST', 'experiments/create', { body: { name: 'busy' }, headers: ADMIN, workspace: 'team-busy' });
      const res = await call('DELETE', `${V3}/workspaces/team-busy`, { headers: ADMIN });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error_code: 'INVALID_STATE' });
      expect(res.body.message).toContain("table 'experiments' still contains 1 resource(s)");
    });

    it('isolates experiments, runs, models and artifacts between two workspaces', async () => {
      const expA = (await call('POST', 'experiments/create', { body: { name: 'same-name' }, ...inA })).body.experiment_id;
      // names are unique within a workspace: team-b has its own experiment of that name
      const expB = (await call('POST', 'experiments/create', { body: { name: 'same-name' }, ...inB })).body.experiment_id;
      expect(expB).not.toBe(expA);
      const run = (await call('POST', 'runs/create', { body: { experiment_id: expA }, ...inA })).body.run.info;
      expect(
        (await call('POST', 'runs/log-metric', { body: { run_id: run.run_id, key: 'm', value: 1, timestamp: 1 }, ...inA })).status,
      ).toBe(200);
      await call('POST', 'registered-models/create', { body: { name: 'model-of-a' }, ...inA });

      expect(await call('GET', `experiments/get?experiment_id=${expA}`, inB)).toMatchObject({
        status: 404,
        body: { error_code: 'RESOURCE_DOES_NOT_EXIST', message: `No Experiment with id=${expA} exists` },
      });
      expect((await call('GET', `runs/get?run_id=${run.run_id}`, inB)).body.message).toBe(`Run with id=${run.run_id} not found`);
      expect((await call('POST', 'runs/set-tag', { body: { run_id: run.run_id, key: 'k', value: 'b' }, ...inB })).status).toBe(404);
      expect((await call('POST', 'runs/delete', { body: { run_id: run.run_id }, ...inB })).status).toBe(404);
      expect((await call('POST', 'runs/search', { body: { experiment_ids: [expA] }, ...inB })).body).toEqual({});
      // Ordered by a metric (the statement that reads the metric's index first), filtered, and with B's own id too;
      // pages of one, so a run of A's found by the search would show as a next page token even if left out of the page.
      const second = (await call('POST', 'runs/create', { body: { experiment_id: expA }, ...inA })).body.run.info;
      await call('POST', 'runs/log-metric', { body: { run_id: second.run_id, key: 'm', value: 2, timestamp: 1 }, ...inA });
      for (const body of [
        { experiment_ids: [expA], order_by: ['metrics.m DESC'], max_results: 1 },
        { experiment_ids: [expA, expB], order_by: ['metrics.m ASC'], filter: 'metrics.m >= 0', max_results: 1 },
        { experiment_ids: [expA], order_by: ['params.p DESC'], max_results: 1 },
      ]) {
        expect((await call('POST', 'runs/search', { body, ...inB })).body).toEqual({});
      }
      const ownSearch = await call('POST', 'runs/search', { body: { experiment_ids: [expA, expB], order_by: ['metrics.m DESC'] }, ...inA });
      expect(ownSearch.body.runs.map((r: { info: { run_id: string } }) => r.info.run_id)).toEqual([second.run_id, run.run_id]);
      const searched = (await call('POST', 'experiments/search', { body: { max_results: 100 }, ...inB })).body.experiments;
      expect(searched.map((e: { experiment_id: string }) => e.experiment_id)).toEqual([expB]);
      expect((await call('GET', 'registered-models/get?name=model-of-a', inB)).body.message).toBe(
        'Registered Model with name=model-of-a not found',
      );
      const put = await call('PUT', `/api/2.0/mlflow-artifacts/artifacts/${expA}/${run.run_id}/artifacts/x.txt`, { ...inB, raw: 'b' });
      expect(put.status).toBe(404);

      // team-a still sees its own, unchanged
      const mine = (await call('GET', `runs/get?run_id=${run.run_id}`, inA)).body.run;
      expect(mine.info.lifecycle_stage).toBe('active');
      expect(mine.data.tags ?? []).not.toContainEqual({ key: 'k', value: 'b' });
      expect((await call('GET', 'registered-models/get?name=model-of-a', inA)).status).toBe(200);
    });

    it('keeps the default workspace as it was: no header, no identity, experiment 0 there only', async () => {
      const created = await call('POST', 'experiments/create', { body: { name: 'plain' } });
      expect(created.status).toBe(200);
      const id = created.body.experiment_id;
      expect((await call('GET', `experiments/get?experiment_id=${id}`)).body.experiment.name).toBe('plain');
      expect((await call('GET', `experiments/get?experiment_id=${id}`, { workspace: 'default' })).status).toBe(200);
      expect((await call('GET', 'experiments/get?experiment_id=0')).body.experiment.name).toBe('Default');
      expect((await call('GET', 'experiments/get?experiment_id=0', inA)).status).toBe(404);
      expect((await call('GET', `experiments/get?experiment_id=${id}`, inA)).status).toBe(404);
      expect((await call('GET', `${V3}/server-info`)).body.workspaces_enabled).toBe(true);
    });

    it.each([
      ['another team', { headers: TEAM_B, workspace: 'team-a' }, "Permission denied to use workspace 'team-a'"],
      ['a caller without identity', { workspace: 'team-a' }, 'no caller identity'],
      ['a role without a grant', { headers: { 'X-User-Id': 'uma', 'X-User-Role': 'svc-user' }, workspace: 'team-a' }, 'no group or role'],
    ])('refuses %s the use of a workspace (403)', async (_, opts, message) => {
      const res = await call('POST', 'experiments/search', { body: {}, ...opts });
      expect(res.status).toBe(403);
      expect(res.body.error_code).toBe('PERMISSION_DENIED');
      expect(res.body.message).toContain(message);
    });

    it('lets only administrators manage workspaces, and lists to a caller the ones they may use', async () => {
      const res = await call('POST', `${V3}/workspaces`, { body: { name: 'team-c' }, headers: TEAM_A });
      expect(res.status).toBe(403);
      expect(res.body.message).toContain('only administrators manage workspaces');
      expect((await call('DELETE', `${V3}/workspaces/team-a`, { headers: TEAM_A })).status).toBe(403);
      const listed = (await call('GET', `${V3}/workspaces`, { headers: TEAM_A })).body.workspaces.map((w: { name: string }) => w.name);
      expect(listed).toEqual(['default', 'team-a']);
    });

    it('answers a workspace that does not exist as MLflow does', async () => {
      expect(await call('POST', 'experiments/search', { body: {}, headers: ADMIN, workspace: 'team-nope' })).toMatchObject({
        status: 404,
        body: { error_code: 'RESOURCE_DOES_NOT_EXIST', message: "Workspace 'team-nope' not found" },
      });
      // to a caller the policy refuses it is a refusal: which workspaces exist is not told
      expect((await call('POST', 'experiments/search', { body: {}, headers: TEAM_B, workspace: 'team-nope' })).status).toBe(403);
    });
  });
}
