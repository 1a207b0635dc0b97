import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { badRequest } from '../../src/platform/errors.ts';
import { createApp, requireCaller, validate } from '../../src/platform/http.ts';
import { createLogger } from '../../src/platform/log.ts';
import { createMetrics } from '../../src/platform/metrics.ts';

// The app factory every service is built on, through HTTP.
function app(ready = async () => true) {
  const a = createApp({ service: 'probe', logger: createLogger('probe', 'silent'), metrics: createMetrics('probe'), ready });
  a.use('/things/*', requireCaller);
  a.get('/things/me', (c) => c.json(c.var.caller));
  a.post('/things/echo', validate('json', z.object({ name: z.string().min(1), size: z.number().int() })), (c) =>
    c.json(c.req.valid('json')),
  );
  a.get('/things/bad', () => {
    throw badRequest('bad thing');
  });
  a.get('/things/crash', () => {
    throw new Error('secret stack detail');
  });
  return a;
}

describe('app factory', () => {
  it('answers /health and /ready', async () => {
    expect((await app().request('/health')).status).toBe(200);
    expect((await app().request('/ready')).status).toBe(200);
    const down = await app(async () => false).request('/ready');
    expect(down.status).toBe(503);
    expect((await app(async () => Promise.reject(new Error('db gone'))).request('/ready')).status).toBe(503);
  });

  it("/health reports the event loop's delay: p99 and max in ms, which a blocked thread raises", async () => {
    const a = app();
    const first = await (await a.request('/health')).json();
    expect(first).toMatchObject({
      status: 'ok',
      service: 'probe',
      event_loop_delay_ms: { p99: expect.any(Number), max: expect.any(Number) },
    });
    await new Promise((r) => setTimeout(r, 100)); // the monitor's first samples, as in a service that has been up a while
    // hold the thread 300 ms, as a synchronous statement would, then let the monitor see the late timer
    const until = performance.now() + 300;
    while (performance.now() < until);
    await new Promise((r) => setTimeout(r, 50));
    const res = await a.request('/health');
    expect(res.status).toBe(200);
    expect((await res.json()).event_loop_delay_ms.max).toBeGreaterThanOrEqual(250);
  });

  it('refuses a request without identity with 401 problem+json', async () => {
    const res = await app().request('/things/me');
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const body = await res.json();
    expect(body).toMatchObject({ type: 'about:blank', title: 'Unauthorized', status: 401 });
    expect(body.requestId).toBe(res.headers.get('x-request-id'));
  });

  it('reads the caller from the ingress headers', async () => {
    const res = await app().request('/things/me', {
      headers: { 'X-User-Id': 'ada', 'X-User-Role': 'svc-admin, svc-engineer', 'X-User-Groups': 'finance,ops', 'X-User-Token': 't0k' },
    });
    expect(await res.json()).toEqual({ user: 'ada', roles: ['svc-admin', 'svc-engineer'], groups: ['finance', 'ops'], token: 't0k' });
    const agent = await app().request('/things/me', { headers: { 'X-Query-User': 'bob', 'X-User-Id': 'agent' } });
    expect((await agent.json()).user).toBe('bob');
  });

  it('lists every invalid field in a 400 problem', async () => {
    const res = await app().request('/things/echo', {
      method: 'POST',
      headers: { 'X-User-Id': 'ada', 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: '', size: 1.5 }),
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.errors.map((e: { location: string }) => e.location).sort()).toEqual(['json.name', 'json.size']);
  });

  it('maps domain errors and hides internal ones behind the request id', async () => {
    const bad = await app().request('/things/bad', { headers: { 'X-User-Id': 'ada' } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).detail).toBe('bad thing');
    const crash = await app().request('/things/crash', { headers: { 'X-User-Id': 'ada', 'X-Request-Id': 'req-42' } });
    expect(crash.status).toBe(500);
    const body = await crash.json();
    expect(body.detail).toBe('internal error (request req-42)');
    expect(JSON.stringify(body)).not.toContain('secret');
  });

  it('echoes a valid inbound request id and replaces an invalid one', async () => {
    expect((await app().request('/health', { headers: { 'X-Request-Id': 'abc-123' } })).headers.get('x-request-id')).toBe('abc-123');
    const replaced = (await app().request('/health', { headers: { 'X-Request-Id': 'bad id <script>' } })).headers.get('x-request-id');
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers an unknown route with a 404 problem', async () => {
    const res = await app().request('/nowhere');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });

  it('answers a served path with a method it does not serve with 405 and the methods it does', async () => {
    const a = app();
    a.delete('/things/:id', (c) => c.body(null, 204));
    const ada = { 'X-User-Id': 'ada' };
    const res = await a.request('/things/echo', { method: 'PUT', headers: ada });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('DELETE, POST');
    expect((await res.json()).detail).toBe('/things/echo does not answer PUT: use DELETE, POST.');
    const me = await a.request('/things/me', { method: 'PATCH', headers: ada });
    expect(me.headers.get('allow')).toBe('DELETE, GET, HEAD');
    expect((await a.request('/things/a/b', { method: 'PUT', headers: ada })).status).toBe(404);
  });

  it('refuses text Postgres cannot store (a NUL) with 400, not a 500', async () => {
    const a = app();
    const nul = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021', severity: 'ERROR' });
    a.get('/things/nul', () => {
      throw nul;
    });
    const res = await a.request('/things/nul', { headers: { 'X-User-Id': 'ada' } });
    expect(res.status).toBe(400);
    expect((await res.json()).detail).toContain('U+0000');
  });

  it('counts requests by route in /metrics', async () => {
    const a = app();
    await a.request('/things/me', { headers: { 'X-User-Id': 'ada' } });
    const text = await (await a.request('/metrics')).text();
    expect(text).toMatch(/http_requests_total\{[^}]*route="\/things\/me"[^}]*status="200"[^}]*\} 1/);
    expect(text).toContain('http_request_duration_seconds_bucket');
  });
});
