import { request as httpRequest } from 'node:http';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { startServer } from '../../src/platform/http.ts';
import { createLogger } from '../../src/platform/log.ts';
import { createMetrics } from '../../src/platform/metrics.ts';
import { createFolderStore, ObjectStoreError, type ObjectStore, type ObjectStoreErrorCode } from '../../src/platform/objects/index.ts';
import { API_PREFIXES, ARTIFACTS_PREFIX, createTrackerApp } from '../../src/tracker/app.ts';
import { artifactRoutes, runArtifactRoutes } from '../../src/tracker/artifacts/index.ts';
import { loadTrackerConfig } from '../../src/tracker/config.ts';
import type { TrackerDeps } from '../../src/tracker/deps.ts';
import { registryRoutes } from '../../src/tracker/registry/routes.ts';
import { openSchemaGate, upgradeTrackerSchema } from '../../src/tracker/schema-gate.ts';

// The artifact proxy (/api/2.0/mlflow-artifacts) and run artifact listing through HTTP, on a folder store.

let db: Database;
let outer: string; // the artifact root's parent: nothing may ever land here
let root: string;
let app: ReturnType<typeof createTrackerApp>;

function buildApp(store: ObjectStore, artifactRoot: string): ReturnType<typeof createTrackerApp> {
  const deps: TrackerDeps = {
    config: loadTrackerConfig({}),
    db,
    artifacts: store,
    artifactRoot,
    now: () => Date.now(),
    logger: createLogger('tracker', 'silent'),
    metrics: createMetrics('tracker'),
    schema: openSchemaGate(),
  };
  const built = createTrackerApp(deps);
  // Mounted here too until the app factory mounts them; a route the factory already has answers first anyway.
  for (const prefix of API_PREFIXES) {
    built.route(prefix, registryRoutes(deps));
    built.route(prefix, runArtifactRoutes(deps));
  }
  built.route(ARTIFACTS_PREFIX, artifactRoutes(deps));
  return built;
}

beforeAll(async () => {
  db = await openPglite();
  await upgradeTrackerSchema(db);
}, 120_000);
afterAll(async () => {
  await db?.close();
});
beforeEach(async () => {
  await db.exec(`TRUNCATE tracker_registered_models, tracker_logged_models, tracker_runs CASCADE`);
  outer = await mkdtemp(join(tmpdir(), 'tracker-artifacts-'));
  root = join(outer, 'root');
  app = buildApp(createFolderStore(root), root);
});
afterEach(async () => {
  await rm(outer, { recursive: true, force: true });
});

const A = '/api/2.0/mlflow-artifacts/artifacts';

const put = (path: string, body: string | Uint8Array | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
  app.request(`${A}/${path}`, {
    method: 'PUT',
    body,
    headers,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);

async function json(res: Response | Promise<Response>): Promise<{ status: number; body: any }> {
  const r = await res;
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

describe('artifact proxy', () => {
  it('uploads, downloads, lists and deletes files and folders', async () => {
    expect(await json(put('1/run/artifacts/model/MLmodel', 'flavors: {}', { 'Content-Type': 'text/plain' }))).toEqual({
      status: 200,
      body: {},
    });
    expect((await put('1/run/artifacts/model/model.pkl', new Uint8Array([1, 2, 3]))).status).toBe(200);
    expect((await put('1/run/artifacts/metrics.json', '{"a": 1}')).status).toBe(200);

    const res = await app.request(`${A}/1/run/artifacts/model/MLmodel`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('flavors: {}');
    expect(res.headers.get('content-length')).toBe('11');
    expect(res.headers.get('content-disposition')).toContain('attachment; filename="MLmodel"');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-type')).toBe('text/plain');
    // an extension it has no type for is bytes, even one named like what every JavaScript object has
    for (const odd of ['notes.constructor', 'notes.__proto__']) {
      expect((await put(`odd/${odd}`, 'x')).status).toBe(200);
      expect((await app.request(`${A}/odd/${odd}`)).headers.get('content-type')).toBe('application/octet-stream');
    }
    expect((await app.request(`${A}/odd`, { method: 'DELETE' })).status).toBe(200);
    expect(new Uint8Array(await (await app.request(`${A}/1/run/artifacts/model/model.pkl`)).arrayBuffer())).toEqual(
      new Uint8Array([1, 2, 3]),
    );

    expect(await json(app.request(`${A}?path=1/run/artifacts`))).toEqual({
      status: 200,
      body: {
        files: [
          { path: 'metrics.json', is_dir: false, file_size: 8 },
          { path: 'model', is_dir: true },
        ],
      },
    });
    expect((await json(app.request(`${A}?path=1/run/artifacts/model`))).body.files).toEqual([
      { path: 'MLmodel', is_dir: false, file_size: 11 },
      { path: 'model.pkl', is_dir: false, file_size: 3 },
    ]);
    expect(await json(app.request(`${A}?path=1/nothing-here`))).toEqual({ status: 200, body: {} });
    expect((await json(app.request(A))).body.files).toEqual([{ path: '1', is_dir: true }]);

    expect(await json(app.request(`${A}/1/run/artifacts/metrics.json`, { method: 'DELETE' }))).toEqual({ status: 200, body: {} });
    expect((await app.request(`${A}/1/run/artifacts/metrics.json`)).status).toBe(404);
    // The client deletes a whole artifact folder with a trailing '/'.
    expect((await app.request(`${A}/1/run/artifacts/`, { method: 'DELETE' })).status).toBe(200);
    expect(await json(app.request(`${A}?path=1/run`))).toEqual({ status: 200, body: {} });
  });

  it('streams a large body in and out', async () => {
    const chunk = new Uint8Array(64 * 1024).map((_, i) => i % 251);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ === 48) return controller.close(); // 3 MiB, with no Content-Length
        controller.enqueue(chunk);
      },
    });
    expect((await put('big/data.bin', body)).status).toBe(200);
    const listed = await json(app.request(`${A}?path=big`));
    expect(listed.body.files).toEqual([{ path: 'data.bin', is_dir: false, file_size: 48 * chunk.length }]);
    const back = new Uint8Array(await (await app.request(`${A}/big/data.bin`)).arrayBuffer());
    expect(back.length).toBe(48 * chunk.length);
    expect(back.subarray(64 * 1024 * 7, 64 * 1024 * 7 + 300)).toEqual(chunk.subarray(0, 300));
  });

  it('keeps file names with spaces and unicode as the client encodes them', async () => {
    expect((await put('dir/my%20plot%20%C3%A9.png', 'png')).status).toBe(200);
    expect((await json(app.request(`${A}?path=dir`))).body.files).toEqual([{ path: 'my plot é.png', is_dir: false, file_size: 3 }]);
    expect(await (await app.request(`${A}/dir/my%20plot%20%C3%A9.png`)).text()).toBe('png');
    expect(await readFile(join(root, 'dir', 'my plot é.png'), 'utf8')).toBe('png');
  });

  it.each([
    ['an encoded ../', 'a%2F..%2F..%2Foutside.txt'],
    ['an encoded leading ../', '%2e%2e%2Foutside.txt'],
    ['a double-encoded ..', '%252e%252e/outside.txt'],
    ['a double-encoded ../', 'x/%252e%252e%252foutside.txt'],
    ['a backslash', 'a%5C..%5C..%5Coutside.txt'],
    ['an absolute path', '%2Fetc%2Foutside.txt'],
    ['an empty segment', '/outside.txt'],
    ['a NUL', 'a%00b'],
    ['a drive letter', 'C:%5Coutside.txt'],
    ['invalid encoding', 'a%zz'],
  ])('refuses %s in a path for every operation', async (_what, path) => {
    for (const method of ['PUT', 'GET', 'DELETE']) {
      const res = await json(app.request(`${A}/${path}`, { method, ...(method === 'PUT' ? { body: 'x' } : {}) }));
      expect(res, `${method} ${path}`).toMatchObject({ status: 400, body: { error_code: 'INVALID_PARAMETER_VALUE' } });
    }
    expect((await readdir(outer)).filter((f) => f !== 'root')).toEqual([]);
  });

  it.each(['../x', '/etc', 'a/../../x', '%2e%2e', 'a\\b', '..'])('refuses list path %j', async (path) => {
    expect(await json(app.request(`${A}?path=${encodeURIComponent(path)}`))).toMatchObject({
      status: 400,
      body: { error_code: 'INVALID_PARAMETER_VALUE' },
    });
  });

  it('refuses a raw ../ sent on the wire, whatever the server does with it', async () => {
    const server = await startServer(app, 0, '127.0.0.1');
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: server.port, method: 'PUT', path: `${A}/../../../../outside.txt` }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end('x');
      });
      expect([400, 404]).toContain(status);
    } finally {
      await server.close();
    }
    expect((await readdir(outer)).filter((f) => f !== 'root')).toEqual([]);
  });

  describe('through a symbolic link inside the root', () => {
    // A link planted inside the root (by anyone who can write the folder) to a folder holding a secret, and one to
    // the secret itself.
    let outside: string;
    const through = '1/run/artifacts/linked/signing.key';
    beforeEach(async () => {
      outside = join(outer, 'outside');
      await mkdir(outside);
      await writeFile(join(outside, 'signing.key'), 'the dashboard signing key');
      await put('1/run/artifacts/ok.txt', 'fine');
      await symlink(outside, join(root, '1', 'run', 'artifacts', 'linked'));
      await symlink(join(outside, 'signing.key'), join(root, 'key-link'));
    });
    afterEach(async () => {
      // the target is as it was, and the rest of the run is served as before
      expect(await readdir(outside)).toEqual(['signing.key']);
      expect(await readFile(join(outside, 'signing.key'), 'utf8')).toBe('the dashboard signing key');
      expect(await (await app.request(`${A}/1/run/artifacts/ok.txt`)).text()).toBe('fine');
    });
    const refused = async (res: Response | Promise<Response>, path: string) => {
      const r = await json(res);
      expect(r).toMatchObject({ status: 400, body: { error_code: 'INVALID_PARAMETER_VALUE' } });
      // the message names the key and says why; neither the secret nor where the link leads
      expect(r.body.message).toContain(path);
      expect(r.body.message).toMatch(/symbolic link/);
      expect(r.body.message).not.toContain(outside);
      expect(r.body.message).not.toContain('dashboard signing key');
    };

    it('refuses a read or a listing', async () => {
      await refused(app.request(`${A}/${through}`), through);
      await refused(app.request(`${A}/key-link`), 'key-link');
      await refused(app.request(`${A}?path=1/run/artifacts/linked`), '1/run/artifacts/linked');
    });

    it('refuses a write, creating nothing outside', async () => {
      await refused(put('1/run/artifacts/linked/planted.txt', 'written outside'), '1/run/artifacts/linked/planted.txt');
      await refused(put('1/run/artifacts/linked/deeper/planted.txt', 'written outside'), '1/run/artifacts/linked/deeper/planted.txt');
      await refused(put(through, 'overwritten'), through);
      await refused(put('key-link', 'overwritten'), 'key-link');
    });

    it('refuses a delete, removing nothing outside', async () => {
      await refused(app.request(`${A}/${through}`, { method: 'DELETE' }), through);
      await refused(app.request(`${A}/1/run/artifacts/linked`, { method: 'DELETE' }), '1/run/artifacts/linked');
      await refused(app.request(`${A}/key-link`, { method: 'DELETE' }), 'key-link');
    });
  });

  it('refuses to delete or download the root itself', async () => {
    await put('keep.txt', 'k');
    expect(await json(app.request(`${A}/`, { method: 'DELETE' }))).toMatchObject({
      status: 400,
      body: { error_code: 'INVALID_PARAMETER_VALUE' },
    });
    expect((await app.request(`${A}/keep.txt`)).status).toBe(200);
  });

  it('answers a missing file with 404 and a folder with 400', async () => {
    await put('d/f.txt', 'f');
    expect(await json(app.request(`${A}/d/missing.txt`))).toMatchObject({ status: 404, body: { error_code: 'RESOURCE_DOES_NOT_EXIST' } });
    expect(await json(app.request(`${A}/d`))).toMatchObject({ status: 400, body: { error_code: 'INVALID_PARAMETER_VALUE' } });
  });

  it('declines multipart upload and presigned download with the 501 the client falls back from', async () => {
    for (const step of ['create', 'complete', 'abort']) {
      const res = await json(
        app.request(`/api/2.0/mlflow-artifacts/mpu/${step}/1/run/artifacts/big.bin`, {
          method: 'POST',
          body: JSON.stringify({ path: '/tmp/big.bin', num_parts: 3 }),
          headers: { 'Content-Type': 'application/json' },
        }),
      );
      expect(res.status).toBe(501);
      expect(res.body.error_code).toBe('NOT_IMPLEMENTED');
      expect(res.body.message.startsWith('Multipart upload is not supported for the current artifact repository')).toBe(true);
    }
    const presigned = await json(app.request('/api/2.0/mlflow-artifacts/presigned/1/run/artifacts/big.bin'));
    expect(presigned).toMatchObject({ status: 501, body: { error_code: 'NOT_IMPLEMENTED' } });
  });
});

describe('artifact store failures', () => {
  const failing = (code: ObjectStoreErrorCode, message: string): ObjectStore => {
    const fail = async (): Promise<never> => {
      throw new ObjectStoreError(code, message);
    };
    return { put: fail, get: fail, head: fail, list: fail, listTree: fail, delete: fail, describe: () => 's3://bucket/prefix/' };
  };

  it.each([
    [
      'NO_SUCH_BUCKET',
      'put "x" in s3://ml-artifacts/ (endpoint http://minio:9000): bucket \'ml-artifacts\' does not exist',
      400,
      'INVALID_STATE',
      /NoSuchBucket.*endpoint http:\/\/minio:9000.*bucket 'ml-artifacts' does not exist/,
    ],
    [
      'ACCESS_DENIED',
      'put "x" in s3://ml-artifacts/ (endpoint http://minio:9000): access denied (InvalidAccessKeyId)',
      400,
      'INVALID_STATE',
      /credentials refused.*InvalidAccessKeyId/,
    ],
    [
      'UNREACHABLE',
      'put "x" in s3://ml-artifacts/ (endpoint http://minio:9000): the endpoint cannot be reached (ECONNREFUSED)',
      503,
      'TEMPORARILY_UNAVAILABLE',
      /ECONNREFUSED/,
    ],
    ['FAILED', 'put "x" failed: boom', 500, 'INTERNAL_ERROR', /boom/],
  ] as const)(
    'maps %s to a status the client does not retry unless it may pass, with the store message',
    async (code, message, status, errorCode, pattern) => {
      app = buildApp(failing(code, message), 's3://ml-artifacts');
      for (const res of [await json(put('x', 'x')), await json(app.request(`${A}/x`)), await json(app.request(`${A}?path=x`))]) {
        expect(res).toMatchObject({ status, body: { error_code: errorCode } });
        expect(res.body.message).toMatch(pattern);
      }
    },
  );
});

describe('run artifacts', () => {
  beforeEach(async () => {
    await db.query(
      `INSERT INTO tracker_runs (run_id, experiment_id, start_time, artifact_uri) VALUES ('r1', 0, 1, 'mlflow-artifacts:/0/r1/artifacts')`,
    );
    await put('0/r1/artifacts/model/MLmodel', 'flavors: {}');
    await put('0/r1/artifacts/metrics.json', '{}');
    await put('0/r2/artifacts/secret.txt', 'other run');
  });

  it('lists a run artifacts by run id, with paths relative to the run', async () => {
    for (const prefix of API_PREFIXES) {
      const top = await json(app.request(`${prefix}/artifacts/list?run_id=r1`));
      expect(top, prefix).toEqual({
        status: 200,
        body: {
          root_uri: 'mlflow-artifacts:/0/r1/artifacts',
          files: [
            { path: 'metrics.json', is_dir: false, file_size: 2 },
            { path: 'model', is_dir: true },
          ],
        },
      });
    }
    const inner = await json(app.request('/api/2.0/mlflow/artifacts/list?run_id=r1&path=model'));
    expect(inner.body.files).toEqual([{ path: 'model/MLmodel', is_dir: false, file_size: 11 }]);
    expect(await json(app.request('/api/2.0/mlflow/artifacts/list?run_id=nope'))).toMatchObject({
      status: 404,
      body: { error_code: 'RESOURCE_DOES_NOT_EXIST' },
    });
    expect(await json(app.request('/api/2.0/mlflow/artifacts/list?run_id=r1&path=..%2Fr2'))).toMatchObject({ status: 400 });
  });

  it('lists a run whose artifact URI is written out under the store root, and nothing for one outside it', async () => {
    await db.query(
      `INSERT INTO tracker_runs (run_id, experiment_id, start_time, artifact_uri) VALUES ('r3', 0, 1, $1), ('r4', 0, 1, 's3://elsewhere/x')`,
      [`${root}/0/r1/artifacts`],
    );
    const written = await json(app.request('/api/2.0/mlflow/artifacts/list?run_id=r3&path=model'));
    expect(written.body).toEqual({ root_uri: `${root}/0/r1/artifacts`, files: [{ path: 'model/MLmodel', is_dir: false, file_size: 11 }] });
    expect(await json(app.request('/api/2.0/mlflow/artifacts/list?run_id=r4'))).toEqual({
      status: 200,
      body: { root_uri: 's3://elsewhere/x' },
    });
    expect(await json(app.request('/api/2.0/mlflow/get-artifact?run_id=r4&path=a.txt'))).toMatchObject({
      status: 400,
      body: { error_code: 'INVALID_PARAMETER_VALUE' },
    });
  });

  it('serves a run file and a registered version file for the UI', async () => {
    const file = await app.request('/ajax-api/2.0/mlflow/get-artifact?run_id=r1&path=model/MLmodel');
    expect(file.status).toBe(200);
    expect(await file.text()).toBe('flavors: {}');
    expect((await app.request('/ajax-api/2.0/mlflow/get-artifact?run_id=r1&path=../r2/secret.txt')).status).toBe(400);

    const headers = { 'Content-Type': 'application/json' };
    await app.request('/api/2.0/mlflow/registered-models/create', { method: 'POST', headers, body: JSON.stringify({ name: 'm' }) });
    await app.request('/api/2.0/mlflow/model-versions/create', {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'm', source: 'runs:/r1/model', run_id: 'r1' }),
    });
    const versionFile = await app.request('/ajax-api/2.0/mlflow/model-versions/get-artifact?name=m&version=1&path=MLmodel');
    expect(versionFile.status).toBe(200);
    expect(await versionFile.text()).toBe('flavors: {}');
  });
});
