import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';

// Every step writes its audit event as a JSON log line with the request id, user and role.
const lines: Record<string, unknown>[] = [];
let h: ExploreHarness;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  h = await exploreHarness({}, { logger: pino({ level: 'info' }, sink) });
}, 60_000);
afterAll(() => h.close());

const events = (requestId: string) => lines.filter((l) => l.requestId === requestId && l.event).map((l) => l.event);

it('emits the pipeline events in order, with request id, user and role', async () => {
  const res = await h.app.request('/query', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst', 'X-Request-Id': 'req-events-1' },
    body: JSON.stringify({ question: 'top 2 customer by account balance' }),
  });
  expect(res.status).toBe(200);
  expect(events('req-events-1')).toEqual([
    'explore_query_received',
    'explore_policy_denied', // supplier is among the candidates, and closed to svc-analyst
    'explore_sql_generated',
    'explore_cost_gate',
    'explore_engine_executed',
    'explore_pii_masked',
    'explore_dashboard_published',
  ]);
  const received = lines.find((l) => l.requestId === 'req-events-1' && l.event === 'explore_query_received')!;
  expect(received).toMatchObject({ user: 'ana', role: 'svc-analyst', question: 'top 2 customer by account balance' });
});

it('emits cache hits, no-table refusals and feedback', async () => {
  const ask = (id: string, who: { user: string; role: string }, body: object, path = '/query') =>
    h.app.request(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-User-Id': who.user, 'X-User-Role': who.role, 'X-Request-Id': id },
      body: JSON.stringify(body),
    });
  await ask('req-a', as.analyst, { question: 'how many orders are there' });
  await ask('req-b', as.analyst, { question: 'how many orders are there' });
  expect(events('req-b')).toEqual(['explore_query_received', 'explore_cache_hit']);
  await ask('req-c', as.viewer, { question: 'how many orders are there' });
  expect(events('req-c')).toContain('explore_no_tables');
  const [row] = await h.db.query<{ id: string }>('SELECT id FROM explore_dashboards LIMIT 1');
  await ask('req-d', as.analyst, { dashboard_id: row!.id, rating: 'down' }, '/feedback');
  expect(events('req-d')).toEqual(['explore_feedback']);
});
