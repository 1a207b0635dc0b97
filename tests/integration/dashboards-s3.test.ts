import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageDigest } from '../../src/platform/dashboard-pages.ts';
import { runtimeHarness, SHARING_PEOPLE, type RuntimeHarness } from '../support/dashboards.ts';
import { exploreHarness, type ExploreHarness, type ExploreIdentity } from '../support/explore.ts';
import { createTestBucket, S3_TEST } from '../support/s3.ts';

// The contract between explore and the runtime with the pages on a real S3-compatible store (MinIO,
// scripts/start-s3.sh), as in a cluster: explore writes each signed page to the bucket, the runtime asks explore for
// the launch decision, fetches the page from the bucket, checks its digest and signature, and serves it from a
// sandbox of the viewer's own. No shared folder, no database of the runtime's.
const people = SHARING_PEOPLE;

describe('dashboards with pages on MinIO', () => {
  let bucket: string;
  let drop: () => Promise<void>;
  let h: ExploreHarness;
  let runtime: RuntimeHarness;
  const open = (id: string, who: ExploreIdentity) =>
    runtime.app.request(`/d/${id}`, {
      headers: { 'X-User-Id': who.user, 'X-User-Role': who.role, ...(who.groups ? { 'X-User-Groups': who.groups } : {}) },
    });

  beforeAll(async () => {
    ({ bucket, drop } = await createTestBucket('dashboards'));
    h = await exploreHarness({
      SVC_DASHBOARDS_STORE: `s3://${bucket}/pages`,
      SVC_S3_ENDPOINT_URL: S3_TEST.endpoint,
      AWS_DEFAULT_REGION: S3_TEST.region,
      OBJSTORE_ACCESS_KEY_ID: S3_TEST.accessKeyId,
      OBJSTORE_SECRET_ACCESS_KEY: S3_TEST.secretAccessKey,
    });
    runtime = await runtimeHarness(h);
  }, 300_000);
  afterAll(async () => {
    await runtime?.close();
    await h?.close();
    await drop?.();
  });

  it('publishes into the bucket and serves the page to whoever the policy lets in', async () => {
    const q = await h.ask(people.owner, { question: 'how many orders are there', force: true });
    const id = q.body.dashboard_id as string;
    expect(h.deps.pages.describe()).toContain(`s3://${bucket}/pages`);
    // the page is stored after the answer: opening it waits for it
    const owner = await open(id, people.owner);
    expect(owner.status).toBe(200);
    expect(await owner.text()).toContain('15000');
    expect((await h.deps.pages.list('')).map((e) => e.key)).toContain(`${id}.html`);
    expect((await open(id, people.other)).status).toBe(403);
    await h.call('PATCH', `/dashboards/${id}/share`, people.owner, { visibility: 'users', allowed_users: ['luke'], allowed_groups: [] });
    expect((await open(id, people.listed)).status).toBe(200);
  });

  it('refuses a page changed in the bucket, digest or not', async () => {
    const q = await h.ask(people.owner, { question: 'how many parts are there', force: true });
    const id = q.body.dashboard_id as string;
    expect((await open(id, people.owner)).status).toBe(200); // its page is stored (opening waits for it)
    const found = (await h.deps.pages.get(`${id}.html`))!;
    let text = '';
    for await (const chunk of found.body) text += chunk;
    const changed = text.replace('2000', '2001');
    await h.deps.pages.put(`${id}.html`, Buffer.from(changed));
    expect((await open(id, people.owner)).status).toBe(403);
    await h.db.query('UPDATE explore_dashboards SET digest = $2 WHERE id = $1', [id, pageDigest(changed)]);
    const res = await open(id, people.owner);
    expect(res.status).toBe(403);
    expect((await res.json()).detail).toMatch(/signature does not verify/);
  });
});
