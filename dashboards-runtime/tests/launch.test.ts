import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pageDigest } from '@svc/platform/dashboard-pages';
import { signDashboard } from '@svc/platform/dashboard-signature';
import type { LaunchDecision } from '@svc/platform/launch-contract';
import { createLogger } from '@svc/platform/log';
import { createMetrics } from '@svc/platform/metrics';
import { createFolderStore, type ObjectStore } from '@svc/platform/objects';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntimeApp } from '../src/app.ts';
import { createSandboxPool, type SandboxPool } from '../src/pool.ts';
import { createProcessLauncher } from '../src/sandbox/launcher.ts';
import { createSessions } from '../src/viewer.ts';

// The runtime's side of the launch contract, through HTTP, with explore as a stand-in that answers each launch from a
// table: the runtime opens a page only on an explicit allow, only when the page is the one explore published (its
// digest) and signed for that dashboard and owner; every other answer is a refusal the viewer can read.
// tests/unit/runtime.test.ts runs the runtime in front of the real explore.
const KEY = 'test-key';
const BODY = '<html><body>orders: 1500</body></html>\n';
const ANA = { 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst' };

describe('dashboards runtime: the launch contract with explore', () => {
  let pages: ObjectStore;
  let pool: SandboxPool;
  // What the stand-in explore answers for each dashboard: a decision, a status, or a network failure.
  const answers = new Map<string, LaunchDecision | number | 'down'>();
  const put = async (id: string, page: string) => pages.put(`${id}.html`, Buffer.from(page));
  const allow = (id: string, page: string, owner = 'ana'): LaunchDecision => ({
    allow: true,
    reason: 'owner',
    object_key: `${id}.html`,
    digest: pageDigest(Buffer.from(page)),
    owner,
  });
  let app: ReturnType<typeof createRuntimeApp>;
  const open = (id: string, headers: Record<string, string> = ANA) => app.request(`/d/${id}`, { headers });

  beforeAll(async () => {
    pages = createFolderStore(await mkdtemp(join(tmpdir(), 'svc-runtime-pages-')));
    pool = createSandboxPool(createProcessLauncher(), { idleSeconds: 60, max: 5, maxPerUser: 3 });
    const signed = signDashboard(BODY, KEY, { id: 'ok', owner: 'ana' });
    await put('ok', signed);
    answers.set('ok', allow('ok', signed));
    // signed for another dashboard, published here: the signature names 'other'
    const moved = signDashboard(BODY, KEY, { id: 'other', owner: 'ana' });
    await put('moved', moved);
    answers.set('moved', allow('moved', moved));
    // explore's digest is of another page than the one in the store
    await put('swapped', signDashboard(BODY.replace('1500', '1501'), KEY, { id: 'swapped', owner: 'ana' }));
    answers.set('swapped', allow('swapped', signed));
    // signed with a key the runtime does not hold
    const foreign = signDashboard(BODY, 'another-key', { id: 'foreign', owner: 'ana' });
    await put('foreign', foreign);
    answers.set('foreign', allow('foreign', foreign));
    answers.set('denied', { allow: false, reason: 'the dashboard is private to its owner' });
    answers.set('gone', 404);
    answers.set('broken', 500);
    answers.set('down', 'down');
    answers.set('nopage', allow('nopage', signed));
    app = createRuntimeApp({
      pool,
      pages,
      sessions: createSessions(KEY),
      keys: { current: KEY },
      exploreUrl: 'http://explore.test/',
      fetch: async (url, init) => {
        const launch = /^http:\/\/explore\.test\/dashboards\/([^/]+)\/launch$/.exec(String(url));
        if (!launch) return fetch(url, init); // the sandbox
        const answer = answers.get(decodeURIComponent(launch[1]!));
        if (answer === 'down') throw new TypeError('fetch failed');
        if (typeof answer === 'number') return new Response('{}', { status: answer });
        return answer ? Response.json(answer) : new Response('{}', { status: 404 });
      },
      logger: createLogger('runtime', 'silent'),
      metrics: createMetrics('dashboards-runtime'),
      ready: async () => true,
    });
  });
  afterAll(() => pool.close());

  it('serves the page without its signature line, under the runtime-set CSP, and issues a session cookie', async () => {
    const res = await open('ok');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(BODY);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    expect((await open('ok', { Cookie: cookie })).status).toBe(200);
  });

  it('refuses a viewer with no identity and no session', async () => {
    const res = await open('ok', {});
    expect(res.status).toBe(401);
    expect((await res.json()).detail).toContain('open dashboards through the ingress');
  });

  it.each([
    ['moved', 403, "Dashboard 'moved' was refused"],
    ['swapped', 403, 'the page is not the one explore published'],
    ['foreign', 403, "Dashboard 'foreign' was refused"],
    ['denied', 403, "You may not open dashboard 'denied': the dashboard is private to its owner."],
    ['gone', 404, "Dashboard 'gone' does not exist."],
    ['nopage', 404, "Dashboard 'nopage' has no page in the store."],
    ['broken', 503, 'The access check could not be made: explore answered 500.'],
    ['down', 503, 'The access check could not be made: fetch failed'],
  ])('answers %s with %i: %s', async (id, status, detail) => {
    const res = await open(id);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect((await res.json()).detail).toContain(detail);
  });
});
