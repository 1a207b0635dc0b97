import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { createWasmPolicyEngine, DEFAULT_BUILD_DIR } from '../../src/platform/policy/index.ts';
import { as, exploreHarness, type ExploreHarness, type ExploreIdentity } from '../support/explore.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';

// Leased units (docs/audit.md, "Usage limits: leases"): two replicas of explore on one database, each leasing units
// of the same user's question bucket, through POST /query. Whatever each replica holds, together they never allow
// more than the limit; a replica's lease goes back to the bucket when it lapses; a charge the policy refuses uses
// no unit. A question is a dry run (`execute: false`): it is charged one question and reads nothing.
let gw: ScriptedGateway;
let n = 0;
const ask = async (h: ExploreHarness, who: ExploreIdentity) =>
  h.ask(who, { question: `how many nations ${n++}`, execute: false, persist: false });

beforeAll(async () => {
  gw = await startScriptedGateway({ models: ['svc-chat'], chat: () => '```sql\nSELECT count(*) AS n FROM tpch.tiny.nation\n```' });
});
afterAll(async () => gw.close());

describe('two replicas leasing one bucket', () => {
  let db: Database;
  const open: ExploreHarness[] = [];
  const replicas = async (env: Record<string, string>) => {
    const made = await Promise.all(
      [0, 1].map(() => exploreHarness({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat', ...env }, { db, conformance: false })),
    );
    open.push(...made);
    return made as [ExploreHarness, ExploreHarness];
  };
  beforeAll(async () => {
    db = await openPglite();
  });
  afterAll(async () => {
    await Promise.all(open.map((h) => h.close()));
    await db.close();
  });

  it('never allow more than the limit together, asked in turn and at once', async () => {
    const [a, b] = await replicas({ SVC_LIMIT_EXPLORE_QUESTIONS: '40/h' });
    const statuses: number[] = [];
    // in turns, then eight at a time on both, until both refuse
    for (let i = 0; i < 16; i++) statuses.push((await ask(i % 2 ? b : a, as.user)).status);
    for (let round = 0; round < 8; round++) {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => ask(i % 2 ? b : a, as.user)));
      statuses.push(...answers.map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(40);
    expect(statuses.filter((s) => s === 429)).toHaveLength(statuses.length - 40);
    const last = await ask(a, as.user);
    expect(last.status).toBe(429);
    // 40 an hour: one back every 90 s
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(last.headers.get('retry-after'))).toBeLessThanOrEqual(90);
  });

  it("give a replica's unspent units back when its lease lapses, for the other to use", async () => {
    const leaseMs = 4000;
    const [a, b] = await replicas({ SVC_LIMIT_EXPLORE_QUESTIONS: '40/h', SVC_LIMIT_LEASE_MS: String(leaseMs) });
    // a asks often enough for its lease to grow past one unit
    for (let i = 0; i < 8; i++) expect((await ask(a, as.engineer)).status).toBe(200);
    const drained = performance.now();
    let before = 0;
    while ((await ask(b, as.engineer)).status === 200) before++;
    // b ran dry while a still held units (a's lease had not lapsed: b asked for less than the lease's time)
    expect(performance.now() - drained).toBeLessThan(leaseMs);
    expect(before).toBeLessThan(32);
    // once a's lease lapses its units are back in the bucket, and b spends exactly the rest of the limit
    let after = 0;
    const deadline = Date.now() + leaseMs + 10_000;
    while (after === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      if ((await ask(b, as.engineer)).status === 200) after++;
    }
    while ((await ask(b, as.engineer)).status === 200) after++;
    expect(before + after).toBe(32);
    expect((await ask(a, as.engineer)).status).toBe(429);
  });
});

describe('a charge the limits policy refuses', () => {
  let h: ExploreHarness;
  let db: Database;
  beforeAll(async () => {
    // policy data in which a svc-user's question limit does not parse (refused, closed) and an analyst's is 40 an hour
    const dir = await mkdtemp(join(tmpdir(), 'svc-limits-policy-'));
    await copyFile(join(DEFAULT_BUILD_DIR, 'policy.wasm'), join(dir, 'policy.wasm'));
    const data = JSON.parse(await readFile(join(DEFAULT_BUILD_DIR, 'data.json'), 'utf8'));
    data.svc.config.limits.roles['svc-analyst'] = { 'explore.question': '40/h' };
    data.svc.config.limits.roles['svc-user'] = { 'explore.question': 'lots' };
    await writeFile(join(dir, 'data.json'), JSON.stringify(data));
    db = await openPglite();
    h = await exploreHarness(
      { SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat' },
      { db, conformance: false, policy: await createWasmPolicyEngine({ buildDir: dir }) },
    );
  });
  afterAll(async () => {
    await h.close();
    await db.close();
  });

  it('uses no unit of the bucket or of a lease: the same user still gets the whole limit', async () => {
    const asAnalyst = { user: 'uma', role: 'svc-analyst' };
    let allowed = 0;
    for (let i = 0; i < 6; i++) if ((await ask(h, asAnalyst)).status === 200) allowed++;
    for (let i = 0; i < 6; i++) {
      const refused = await ask(h, as.user);
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toContain('Usage limits');
    }
    let last = await ask(h, asAnalyst);
    while (last.status === 200) {
      allowed++;
      last = await ask(h, asAnalyst);
    }
    expect(last.status).toBe(429);
    expect(allowed).toBe(40);
    const metrics = await (await h.app.request('/metrics')).text();
    expect(metrics).toMatch(/svc_limit_requests_total\{[^}]*user="uma"[^}]*action="explore.question"[^}]*outcome="allowed"[^}]*\} 40/);
    expect(metrics).toMatch(/svc_limit_consumed_total\{[^}]*user="uma"[^}]*action="explore.question"[^}]*\} 40/);
  });
});
