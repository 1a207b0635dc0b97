import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// No service reads or parses a body larger than SVC_MAX_JSON_BYTES: a declared length above it is refused unread,
// a body without a declared length as soon as it passes it. Uploads stream under their own limit.
const mib = (n: number) => Math.round(n * 1024 * 1024);
const bigJson = (bytes: number) => JSON.stringify({ question: 'x'.repeat(bytes) });

describe('request body limit', () => {
  let explore: ExploreHarness;
  let retrieval: RetrievalHarness;
  let tracker: TrackerHarness;
  beforeAll(async () => {
    [explore, retrieval, tracker] = await Promise.all([
      exploreHarness({ SVC_MAX_JSON_BYTES: String(mib(1)) }),
      openPglite({}).then((db) => retrievalHarness(db)),
      trackerHarness({ env: { SVC_MAX_JSON_BYTES: String(mib(2)) } }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([explore.close(), retrieval.close(), tracker.close()]);
  });

  it('explore refuses a 2 MiB question with 413 problem+json naming the setting, before validation', async () => {
    const res = await explore.app.request('/query', {
      method: 'POST',
      headers: { 'X-User-Id': as.analyst.user, 'X-User-Role': as.analyst.role, 'Content-Type': 'application/json' },
      body: bigJson(mib(2)),
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect((await res.json()).detail).toMatch(/larger than 1048576 bytes \(SVC_MAX_JSON_BYTES\)/);
  });

  it('retrieval refuses a large JSON body but streams an upload larger than the JSON limit', async () => {
    const refused = await retrieval.json('POST', '/collections', who.engineer, {
      slug: 'big',
      name: 'x'.repeat(mib(1.5)),
      allowed_roles: [],
    });
    expect(refused.status).toBe(413);
    expect((await retrieval.json('POST', '/collections', who.engineer, { slug: 'notes', name: 'Notes', allowed_roles: [] })).status).toBe(
      201,
    );
    const line = 'The archive keeps every field note of the survey in plain words.\n';
    const text = new TextEncoder().encode(line.repeat(Math.ceil(mib(1.5) / line.length)));
    const upload = await retrieval.upload('notes', who.engineer, { name: 'notes.txt', bytes: text, type: 'text/plain' });
    expect(upload.status).toBe(201);
  });

  it("the tracker answers an oversized batch with 413 in MLflow's error wire, naming the limit (the client does not retry it)", async () => {
    const metrics = Array.from({ length: 60_000 }, (_, i) => ({ key: `m${i % 50}`, value: i, timestamp: 1, step: i }));
    const res = await tracker.post('runs/log-batch', { run_id: 'r', metrics, params: [], tags: [] });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      error_code: 'BAD_REQUEST',
      message: expect.stringMatching(/larger than 2097152 bytes \(SVC_MAX_JSON_BYTES\)/),
    });
  });

  describe('over a socket', () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await startServer(explore.app, 0, '127.0.0.1');
    });
    afterAll(() => server.close());

    it('answers a declared 100 MB body with 413 before the body arrives, and /health meanwhile', async () => {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${server.url}/query`, {
          method: 'POST',
          headers: {
            'X-User-Id': 'ana',
            'X-User-Role': 'svc-analyst',
            'Content-Type': 'application/json',
            'Content-Length': String(100_000_000),
          },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.write('{"question":"'); // only the first bytes are ever sent
      });
      expect(status).toBe(413);
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
    });

    it('the tracker answers a declared 100 MB body with 413 and the MLflow error naming the limit, unread', async () => {
      const trackerServer = await startServer(tracker.app, 0, '127.0.0.1');
      try {
        const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = request(`${trackerServer.url}/api/2.0/mlflow/runs/log-batch`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'Content-Length': String(100_000_000) },
          });
          req.on('response', (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              body += chunk;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          });
          req.on('error', reject);
          req.write('{"run_id":"'); // only the first bytes are ever sent
        });
        expect(answer.status).toBe(413);
        expect(JSON.parse(answer.body)).toEqual({
          error_code: 'BAD_REQUEST',
          message: expect.stringMatching(/larger than 2097152 bytes \(SVC_MAX_JSON_BYTES\)/),
        });
      } finally {
        await trackerServer.close();
      }
    });
  });
});
