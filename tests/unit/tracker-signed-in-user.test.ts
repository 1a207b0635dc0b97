import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCallerResolver } from '../../src/platform/auth/index.ts';
import { oidcSettings, startTestIssuer, type TestIssuer } from '../support/oidc-issuer.ts';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// System tags follow the verified identity (issue 31, finding 10): in jwt mode a run's mlflow.user is the token's
// user. set-tag, log-batch and delete-tag cannot change it afterwards (403 PERMISSION_DENIED in MLflow's error wire);
// the same value again is accepted, as the MLflow client may send it. Without a token, or in headers mode, the
// client's value stands as before.

const KNOWN_ROLES = ['svc-admin', 'svc-engineer', 'svc-analyst', 'svc-user', 'svc-viewer'];
let issuer: TestIssuer;
let jwt: TrackerHarness;
let headers: TrackerHarness;
let eve: string;

beforeAll(async () => {
  issuer = await startTestIssuer();
  const callers = createCallerResolver({ mode: 'jwt', ...oidcSettings(issuer.url) }, { knownRoles: () => KNOWN_ROLES });
  [jwt, headers] = await Promise.all([trackerHarness({ deps: { callers } }), trackerHarness()]);
  eve = await issuer.sign({ preferred_username: 'eve', realm_access: { roles: ['svc-engineer'] } });
}, 60_000);
afterAll(async () => {
  await Promise.all([jwt.close(), headers.close()]);
  await issuer.close();
});

async function call(t: TrackerHarness, path: string, body: unknown, token?: string) {
  const res = await t.app.request(`/api/2.0/mlflow/${path}`, {
    method: path === 'runs/get' ? 'GET' : 'POST',
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    ...(path === 'runs/get' ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** A run as the MLflow client creates it: its machine's login name in user_id and in the mlflow.user tag. */
async function startRun(t: TrackerHarness, token?: string): Promise<string> {
  const res = await call(
    t,
    'runs/create',
    { experiment_id: '0', user_id: 'laptop-user', tags: [{ key: 'mlflow.user', value: 'laptop-user' }] },
    token,
  );
  expect(res.status).toBe(200);
  return res.body.run.info.run_id;
}

async function userOf(t: TrackerHarness, runId: string) {
  const res = await t.app.request(`/api/2.0/mlflow/runs/get?run_id=${runId}`);
  const { run } = (await res.json()) as { run: { info: { user_id: string }; data: { tags?: { key: string; value: string }[] } } };
  return { userId: run.info.user_id, tag: run.data.tags?.find((t) => t.key === 'mlflow.user')?.value };
}

const refused = {
  error_code: 'PERMISSION_DENIED',
  message: expect.stringMatching(/mlflow\.user.*'eve'.*follows the verified token/),
};

describe('jwt mode: a run keeps the signed-in user', () => {
  it('refuses set-tag of mlflow.user to another user, and keeps the recorded one', async () => {
    const runId = await startRun(jwt, eve);
    const res = await call(jwt, 'runs/set-tag', { run_id: runId, key: 'mlflow.user', value: 'mallory' }, eve);
    expect(res).toEqual({ status: 403, body: refused });
    expect(await userOf(jwt, runId)).toEqual({ userId: 'eve', tag: 'eve' });
  });

  it('refuses log-batch carrying mlflow.user, and writes nothing of the batch', async () => {
    const runId = await startRun(jwt, eve);
    const res = await call(
      jwt,
      'runs/log-batch',
      {
        run_id: runId,
        metrics: [{ key: 'acc', value: 1, timestamp: 1 }],
        params: [],
        tags: [
          { key: 'team', value: 'vision' },
          { key: 'mlflow.user', value: 'mallory' },
        ],
      },
      eve,
    );
    expect(res).toEqual({ status: 403, body: refused });
    expect(await userOf(jwt, runId)).toEqual({ userId: 'eve', tag: 'eve' });
    const run = await jwt.get('runs/get', { run_id: runId });
    expect(run.body.run.data.metrics).toBeUndefined();
  });

  it('refuses deleting mlflow.user', async () => {
    const runId = await startRun(jwt, eve);
    const res = await call(jwt, 'runs/delete-tag', { run_id: runId, key: 'mlflow.user' }, eve);
    expect(res.status).toBe(403);
    expect(res.body.error_code).toBe('PERMISSION_DENIED');
    expect(await userOf(jwt, runId)).toEqual({ userId: 'eve', tag: 'eve' });
  });

  it("accepts the token's own user again, and other tags as before", async () => {
    const runId = await startRun(jwt, eve);
    expect((await call(jwt, 'runs/set-tag', { run_id: runId, key: 'mlflow.user', value: 'eve' }, eve)).status).toBe(200);
    const batch = await call(
      jwt,
      'runs/log-batch',
      {
        run_id: runId,
        tags: [
          { key: 'mlflow.user', value: 'eve' },
          { key: 'team', value: 'nlp' },
        ],
      },
      eve,
    );
    expect(batch.status).toBe(200);
    expect((await call(jwt, 'runs/update', { run_id: runId, status: 'FINISHED' }, eve)).status).toBe(200);
    expect(await userOf(jwt, runId)).toEqual({ userId: 'eve', tag: 'eve' });
  });

  it('records the token user on a prompt engineering run, whatever its message says', async () => {
    const res = await call(
      jwt,
      'runs/create-promptlab-run',
      {
        experiment_id: '0',
        user_id: 'mallory',
        tags: [{ key: 'mlflow.user', value: 'mallory' }],
        prompt_template: 'Say {{ x }}',
        prompt_parameters: [{ key: 'x', value: 'hi' }],
        model_route: 'chat',
        model_parameters: [],
        model_input: 'Say hi',
        model_output: 'hi',
        mlflow_version: '3.1.0',
      },
      eve,
    );
    expect(res.status).toBe(200);
    expect(await userOf(jwt, res.body.run.info.run_id)).toEqual({ userId: 'eve', tag: 'eve' });
  });

  it('a call without a token (inside the cluster) sets mlflow.user as the client says', async () => {
    const runId = await startRun(jwt);
    expect((await call(jwt, 'runs/set-tag', { run_id: runId, key: 'mlflow.user', value: 'batch-job' })).status).toBe(200);
    expect((await userOf(jwt, runId)).tag).toBe('batch-job');
  });
});

describe('headers mode: the client sets mlflow.user itself, as today', () => {
  it('accepts set-tag, log-batch and delete-tag of mlflow.user', async () => {
    const runId = await startRun(headers);
    expect((await call(headers, 'runs/set-tag', { run_id: runId, key: 'mlflow.user', value: 'ana' })).status).toBe(200);
    expect((await userOf(headers, runId)).tag).toBe('ana');
    expect((await call(headers, 'runs/log-batch', { run_id: runId, tags: [{ key: 'mlflow.user', value: 'bo' }] })).status).toBe(200);
    expect((await userOf(headers, runId)).tag).toBe('bo');
    expect((await call(headers, 'runs/delete-tag', { run_id: runId, key: 'mlflow.user' })).status).toBe(200);
    expect((await userOf(headers, runId)).tag).toBeUndefined();
  });
});
