import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { loadLimitSettings } from '../../src/platform/limits/index.ts';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';

// Per-user limits on what costs money, through the services' HTTP interfaces: a question over the limit is refused
// before the model is called, other users and roles with their own limit are not affected, and the refusals count.
describe('the question limit in explore', () => {
  let gw: ScriptedGateway;
  let h: ExploreHarness;
  const chats = () => gw.requests.filter((r) => r.path === '/v1/chat/completions').length;
  beforeAll(async () => {
    gw = await startScriptedGateway({ models: ['svc-chat'], chat: () => '```sql\nSELECT count(*) AS n FROM tpch.tiny.nation\n```' });
    h = await exploreHarness({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat', SVC_LIMIT_EXPLORE_QUESTIONS: '2/h' });
  }, 60_000);
  afterAll(async () => {
    await h.close();
    await gw.close();
  });

  it('answers 429 with Retry-After once a user has asked their limit, without calling the model', async () => {
    for (const q of ['how many nations', 'count the nations'])
      expect((await h.ask(as.user, { question: q, persist: false })).status).toBe(200);
    const before = chats();
    const refused = await h.ask(as.user, { question: 'nations, how many?', persist: false });
    expect(refused.status).toBe(429);
    expect(refused.type).toContain('application/problem+json');
    expect(refused.body).toMatchObject({ title: 'Too Many Requests', status: 429, action: 'explore.question' });
    expect(refused.body.detail).toContain('2 per 3600 s');
    const res = await h.app.request('/query', {
      method: 'POST',
      headers: { 'X-User-Id': 'uma', 'X-User-Role': 'svc-user', 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: 'and again?', persist: false }),
    });
    expect(res.status).toBe(429);
    // 2 an hour refill one every 1800 s
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(1700);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(1800);
    expect(chats()).toBe(before);

    // An answer already in the cache costs nothing and is still given.
    expect((await h.ask(as.user, { question: 'how many nations', persist: false })).body.cached).toBe(true);
    // Another user is unaffected.
    expect((await h.ask(as.engineer, { question: 'how many nations', persist: false, force: true })).status).toBe(200);
  });

  it('takes a role limit from the policy data over the setting: analysts 600 an hour, administrators none', async () => {
    for (let i = 0; i < 4; i++) expect((await h.ask(as.analyst, { question: `nations ${i}`, persist: false })).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await h.ask(as.admin, { question: `nations ${i}`, persist: false })).status).toBe(200);
  });

  it('counts charges per user and action, and records the refusal in the audit chain', async () => {
    const metrics = await (await h.app.request('/metrics')).text();
    expect(metrics).toMatch(/svc_limit_requests_total\{[^}]*user="uma"[^}]*action="explore.question"[^}]*outcome="refused"[^}]*\} 2/);
    expect(metrics).toMatch(/svc_limit_consumed_total\{[^}]*user="uma"[^}]*action="explore.question"[^}]*\} 2/);
    const refusals = await h.db.query<{ actor: string }>(
      `SELECT actor FROM audit_records WHERE action = 'question' AND (detail->>'status')::int = 429`,
    );
    expect(refusals).toEqual([{ actor: 'uma' }, { actor: 'uma' }]);
  });
});

describe('the bytes-scanned limit in explore', () => {
  let gw: ScriptedGateway;
  const harnesses: ExploreHarness[] = [];
  beforeAll(async () => {
    gw = await startScriptedGateway({ models: ['svc-chat'], chat: () => '```sql\nSELECT count(*) AS n FROM tpch.tiny.lineitem\n```' });
  });
  afterAll(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    await gw.close();
  });

  it("charges the engine's estimate before the statement runs: 429 once the hour's bytes are spent", async () => {
    const env = { SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat' };
    const probe = await exploreHarness(env);
    harnesses.push(probe);
    const estimate = (await probe.ask(as.user, { question: 'count line items', execute: false })).body.cost_bytes as number;
    expect(estimate).toBeGreaterThan(0);
    const h = await exploreHarness({ ...env, SVC_LIMIT_EXPLORE_TRINO_BYTES: `${Math.floor(estimate * 1.5)}/h` });
    harnesses.push(h);
    expect((await h.ask(as.user, { question: 'count line items', persist: false })).status).toBe(200);
    // a dry run reads nothing and is not charged
    expect((await h.ask(as.user, { question: 'count line items please', execute: false })).status).toBe(200);
    const refused = await h.ask(as.user, { question: 'count line items again', persist: false, force: true });
    expect(refused).toMatchObject({ status: 429, body: { action: 'explore.trino_bytes' } });
    expect(refused.body.detail).toContain('bytes scanned');
  });
});

describe('the embeddings limit per upload in retrieval', () => {
  let db: Database;
  let h: RetrievalHarness;
  const text = (words: number, seed: string) => new TextEncoder().encode(Array.from({ length: words }, (_, i) => `${seed}${i}`).join(' '));
  beforeAll(async () => {
    db = await openPglite();
    h = await retrievalHarness(db, {
      env: { SVC_LIMIT_RETRIEVAL_EMBEDDINGS: '6/h', SVC_CHUNK_SIZE_TOKENS: '5', SVC_CHUNK_OVERLAP_TOKENS: '0' },
    });
    expect((await h.json('POST', '/collections', who.engineer, { slug: 'lim', name: 'Limits', allowed_roles: [] })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await h.close();
    await db.close();
  });

  it('charges one unit per chunk embedded: over the limit is 429 and stores nothing, above the capacity 413', async () => {
    expect((await h.upload('lim', who.engineer, { name: 'a.txt', bytes: text(20, 'alpha') })).status).toBe(201); // 4 chunks
    const refused = await h.upload('lim', who.engineer, { name: 'b.txt', bytes: text(20, 'beta') });
    expect(refused).toMatchObject({ status: 429, body: { action: 'retrieval.embedding' } });
    expect(refused.body.detail).toContain('embedded chunks');
    const tooLarge = await h.upload('lim', who.admin, { name: 'c.txt', bytes: text(40, 'gamma') }); // 8 chunks
    expect(tooLarge).toMatchObject({ status: 413, body: { cost: 8, capacity: 6 } });
    // another user has a bucket of their own
    expect((await h.upload('lim', who.admin, { name: 'd.txt', bytes: text(20, 'delta') })).status).toBe(201);
    const docs = await h.json('GET', '/collections/lim/documents', who.engineer);
    expect(docs.body.documents.map((d: { filename: string }) => d.filename).sort()).toEqual(['a.txt', 'd.txt']);
  });
});

describe('limit settings', () => {
  it('name the variable of a value that is not a limit', () => {
    expect(() => loadLimitSettings({ SVC_LIMIT_EXPLORE_QUESTIONS: 'lots' })).toThrow(
      /SVC_LIMIT_EXPLORE_QUESTIONS="lots": expected N\/unit/,
    );
    expect(loadLimitSettings({ LIMIT_RETRIEVAL_ANSWERS: '10/min', SVC_LIMIT_EXPLORE_QUESTIONS: 'off' })).toMatchObject({
      'retrieval.answer': { capacity: 10, perSeconds: 60 },
      'explore.question': 'unlimited',
    });
  });
});
