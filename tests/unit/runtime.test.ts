import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxArgs } from '../../src/dashboards-runtime/sandbox/launcher.ts';
import { signDashboard } from '../../src/platform/dashboard-signature.ts';
import { runtimeHarness, SHARING_PEOPLE, VISIBILITIES, viewMatrix, type RuntimeHarness } from '../support/dashboards.ts';
import { exploreHarness, type ExploreHarness, type ExploreIdentity } from '../support/explore.ts';

// The dashboards runtime through HTTP: explore decides access, the signature is checked at launch, and every
// (viewer, dashboard) pair gets a sandbox process of its own that can neither write files nor start processes.
const people = SHARING_PEOPLE;

describe('dashboards runtime', () => {
  let h: ExploreHarness;
  let runtime: RuntimeHarness;
  const ids: Record<string, string> = {};
  let keys = { current: 'test-key', old: undefined as string | undefined };

  const open = (id: string, who?: ExploreIdentity, cookie?: string) =>
    runtime.app.request(`/d/${id}`, {
      headers: {
        ...(who ? { 'X-User-Id': who.user, 'X-User-Role': who.role, ...(who.groups ? { 'X-User-Groups': who.groups } : {}) } : {}),
        ...(cookie ? { Cookie: cookie } : {}),
      },
    });

  beforeAll(async () => {
    h = await exploreHarness();
    runtime = await runtimeHarness(h, { keys: () => keys });
    for (const v of VISIBILITIES) {
      const q = await h.ask(people.owner, { question: `how many orders are there ${v}`, force: true });
      ids[v] = q.body.dashboard_id;
      await h.call('PATCH', `/dashboards/${ids[v]}/share`, people.owner, { visibility: v, allowed_users: ['luke'], allowed_groups: ['finance'] });
    }
  }, 60_000);
  afterAll(async () => {
    await runtime.close();
    await h.close();
  });

  it.each(viewMatrix())('opens for %s a %s dashboard: %s', async (who, v, allow) => {
    const res = await open(ids[v]!, people[who]);
    expect(res.status).toBe(allow ? 200 : 403);
    if (allow) expect(await res.text()).toContain('15000');
  });

  it('refuses a viewer without identity, and accepts the session cookie it issued', async () => {
    expect((await open(ids.public!)).status).toBe(401);
    const first = await open(ids.public!, people.other);
    const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
    expect(cookie).toMatch(/^svc_dashboard_session=/);
    expect((await open(ids.public!, undefined, cookie)).status).toBe(200);
    expect((await open(ids.public!, undefined, 'svc_dashboard_session=forged.token.value')).status).toBe(401);
  });

  it('gives two viewers two sandbox processes, and one viewer the same one again', async () => {
    const a = (await open(ids.public!, people.owner)).headers.get('x-sandbox-pid');
    const b = (await open(ids.public!, people.admin)).headers.get('x-sandbox-pid');
    const a2 = (await open(ids.public!, people.owner)).headers.get('x-sandbox-pid');
    expect(a).toBeTruthy();
    expect(b).toBeTruthy();
    expect(a).not.toBe(b);
    expect(a2).toBe(a);
  });

  it('refuses a page changed by one byte', async () => {
    const q = await h.ask(people.owner, { question: 'how many parts are there', force: true });
    const [row] = await h.db.query<{ file: string }>('SELECT file FROM explore_dashboards WHERE id = $1', [q.body.dashboard_id]);
    const page = await readFile(row!.file, 'utf8');
    await writeFile(row!.file, page.replace('2000', '2001'));
    const res = await open(q.body.dashboard_id, people.owner);
    expect(res.status).toBe(403);
    expect((await res.json()).detail).toMatch(/signature does not verify/);
  });

  it('accepts the previous key during a rotation, and only then', async () => {
    const q = await h.ask(people.owner, { question: 'how many regions are there', force: true });
    const [row] = await h.db.query<{ file: string }>('SELECT file FROM explore_dashboards WHERE id = $1', [q.body.dashboard_id]);
    keys = { current: 'new-key', old: 'test-key' };
    expect((await open(q.body.dashboard_id, people.owner)).status).toBe(200);
    keys = { current: 'new-key', old: undefined };
    expect((await open(q.body.dashboard_id, people.owner)).status).toBe(403);
    const body = (await readFile(row!.file, 'utf8')).split('\n').slice(1).join('\n');
    await writeFile(row!.file, signDashboard(body, 'new-key'));
    expect((await open(q.body.dashboard_id, people.owner)).status).toBe(200);
    keys = { current: 'test-key', old: undefined };
  });

  it('runs sandboxes that can neither write a file nor start a process', async () => {
    const [row] = await h.db.query<{ file: string }>('SELECT file FROM explore_dashboards LIMIT 1');
    const attempt = (code: string) => spawnSync(process.execPath, [...sandboxArgs(row!.file), '-e', code], { encoding: 'utf8' });
    const write = attempt("require('fs').writeFileSync('/tmp/svc-sandbox-escape', 'x')");
    expect(write.status).not.toBe(0);
    expect(write.stderr).toContain('ERR_ACCESS_DENIED');
    const spawn = attempt("require('child_process').execSync('id')");
    expect(spawn.status).not.toBe(0);
    expect(spawn.stderr).toContain('ERR_ACCESS_DENIED');
    const readOther = attempt("require('fs').readFileSync('/etc/hostname')");
    expect(readOther.stderr).toContain('ERR_ACCESS_DENIED');
    const readOwn = attempt(`process.stdout.write(String(require('fs').readFileSync(${JSON.stringify(row!.file)}).length))`);
    expect(readOwn.status).toBe(0);
  });

  it('refuses to serve from a sandbox the permission model does not restrict (no flags, or a runtime without it)', async () => {
    const [row] = await h.db.query<{ file: string }>('SELECT file FROM explore_dashboards LIMIT 1');
    const script = new URL('../../src/dashboards-runtime/sandbox/sandbox.mjs', import.meta.url).pathname;
    const open = spawnSync(process.execPath, [script, row!.file, 'digest'], { encoding: 'utf8', timeout: 10_000 });
    expect(open.status).toBe(4);
    expect(open.stderr).toContain('permission model');
  });

  it('answers 404 for a dashboard that does not exist or was deleted', async () => {
    expect((await open('no-such-dashboard', people.admin)).status).toBe(404);
    const q = await h.ask(people.owner, { question: 'how many nations are there', force: true });
    await h.call('DELETE', `/dashboards/${q.body.dashboard_id}`, people.owner);
    expect((await open(q.body.dashboard_id, people.owner)).status).toBe(404);
  });
});
