import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyChain } from '../../src/platform/audit/index.ts';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { openSharedParts } from '../../src/platform/launcher.ts';
import type { BundleEngine } from '../../src/platform/policy/index.ts';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { bundleServer, committedBundle, keyPair, sign } from '../support/policy-bundles.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';

type Row = { seq: number; service: string; action: string; actor: string; detail: Record<string, unknown> };
const records = (db: Database) => db.query<Row>(`SELECT seq, service, action, actor, detail FROM audit_records ORDER BY seq`);

// What the services write to the chain, seen through their HTTP interfaces: every retrieval, every question (its
// SQL and how it ended), every sharing change and deletion; and the head an outside system anchors.
describe('retrieval records every query in the audit chain', () => {
  let db: Database;
  let h: RetrievalHarness;
  beforeAll(async () => {
    db = await openPglite();
    h = await retrievalHarness(db);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await db.close();
  });

  it('lists the chained records at /audit/queries and gives the head at /audit/head', async () => {
    expect((await h.json('POST', '/collections', who.engineer, { slug: 'hb', name: 'Handbook', allowed_roles: [] })).status).toBe(201);
    const upload = await h.upload('hb', who.engineer, {
      name: 'a.txt',
      bytes: new TextEncoder().encode('vacation days are twenty five a year'),
    });
    expect(upload.status).toBe(201);
    for (const question of ['how many vacation days?', 'what about sick days?']) {
      expect((await h.json('POST', '/collections/hb/query', who.user, { question })).status).toBe(200);
    }
    const chain = await records(db);
    expect(chain.map((r) => [r.seq, r.service, r.action, r.actor, r.detail.question])).toEqual([
      [1, 'retrieval', 'query', 'uma', 'how many vacation days?'],
      [2, 'retrieval', 'query', 'uma', 'what about sick days?'],
    ]);
    const listed = await h.json('GET', '/audit/queries?limit=10', who.user);
    expect(listed.body.queries.map((q: { id: number; question: string }) => [q.id, q.question])).toEqual([
      [2, 'what about sick days?'],
      [1, 'how many vacation days?'],
    ]);
    const head = await h.json('GET', '/audit/head', who.viewer);
    const [last] = await db.query<{ hash: string }>(`SELECT hash FROM audit_records WHERE seq = 2`);
    expect(head).toMatchObject({ status: 200, body: { seq: 2, hash: last!.hash, encoding: 'svc-audit-v1' } });
    expect((await h.json('GET', '/audit/head')).status).toBe(401);
    expect((await verifyChain(db)).ok).toBe(true);
  });
});

describe('explore records questions, shares and deletions in the audit chain', () => {
  let gw: ScriptedGateway;
  let h: ExploreHarness;
  beforeAll(async () => {
    gw = await startScriptedGateway({
      models: ['svc-chat'],
      chat: () => '```sql\nSELECT n_name FROM tpch.tiny.nation ORDER BY n_name\n```',
    });
    h = await exploreHarness({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat' });
  }, 60_000);
  afterAll(async () => {
    await h.close();
    await gw.close();
  });

  it('one record per question with its SQL and outcome, and one per sharing change or deletion', async () => {
    const answered = await h.ask(as.analyst, { question: 'list the nations' });
    expect(answered.status).toBe(200);
    expect((await h.ask(as.analyst, { question: 'list the nations' })).body.cached).toBe(true);
    expect((await h.ask(as.viewer, { question: 'list the nations' })).status).toBe(403);
    const id = answered.body.dashboard_id;
    expect(
      (await h.call('PATCH', `/dashboards/${id}/share`, as.analyst, { visibility: 'users', allowed_users: ['uma'], allowed_groups: [] }))
        .status,
    ).toBe(200);
    expect(
      (await h.call('PATCH', `/dashboards/${id}/share`, as.user, { visibility: 'public', allowed_users: [], allowed_groups: [] })).status,
    ).toBe(404);
    expect((await h.call('DELETE', `/dashboards/${id}`, as.analyst)).status).toBe(200);

    const chain = await records(h.db);
    expect(chain.map((r) => [r.seq, r.action, r.actor, r.detail.outcome ?? null])).toEqual([
      [1, 'question', 'ana', 'answered'],
      [2, 'question', 'ana', 'cached'],
      [3, 'question', 'vic', 'refused'],
      [4, 'dashboard_share', 'ana', null],
      [5, 'dashboard_delete', 'ana', null],
    ]);
    expect(chain[0]!.detail).toMatchObject({
      question: 'list the nations',
      model: 'svc-chat',
      sql: expect.stringContaining('SELECT n_name FROM tpch.tiny.nation'),
      status: 200,
      row_count: 25,
      dashboard_id: id,
    });
    expect(chain[2]!.detail).toMatchObject({ status: 403, sql: null, detail: expect.stringContaining('None of the tables') });
    expect(chain[3]!.detail).toMatchObject({
      dashboard_id: id,
      before: { visibility: 'private' },
      after: { visibility: 'users', allowed_users: ['uma'] },
    });
    expect((await h.call('GET', '/audit/head', as.viewer)).body).toMatchObject({ seq: 5 });
    expect((await verifyChain(h.db)).ok).toBe(true);
  });
});

describe('policy bundles taken into force are recorded in the audit chain', () => {
  it('one record per activation, by the replica that took it, with the revision it replaced', async () => {
    const key = keyPair('ec');
    const server = await bundleServer();
    server.publish(await sign(await committedBundle('rev-1'), key));
    const shared = await openSharedParts(
      {
        SVC_LOG_LEVEL: 'silent',
        SVC_POLICY_BUNDLE_URL: server.url,
        SVC_POLICY_BUNDLE_PUBLIC_KEY: key.publicKeyPem,
        SVC_POLICY_POLL_SECONDS: '3600',
      },
      { embedded: false, inMemory: true },
    );
    try {
      server.publish(await sign(await committedBundle('rev-2'), key));
      expect(await (shared.policy as BundleEngine).poll()).toMatchObject({ outcome: 'activated', revision: 'rev-2' });
      const chain = await records(shared.db);
      expect(chain.map((r) => [r.service, r.action, r.actor, r.detail.revision, r.detail.previous])).toEqual([
        ['policy', 'bundle_activated', `${hostname()}/${process.pid}`, 'rev-1', null],
        ['policy', 'bundle_activated', `${hostname()}/${process.pid}`, 'rev-2', 'rev-1'],
      ]);
      expect((await verifyChain(shared.db)).ok).toBe(true);
    } finally {
      await shared.policy.close?.();
      await shared.db.close();
      await server.close();
    }
  });
});
