import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFairQueue } from '../../src/explore/engines/fairness.ts';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';

// Fairness on the embedded engine (issue 31, finding 7): one user's slow statements do not hold the engine from
// everyone else. A per-user cap (429), a pool of workers, a queue wait apart from the statement's own limit (503).
// A replaced or new worker loads the sample again: tens of seconds on a loaded machine, so the waits are generous.
const SLOW = 'SELECT count(*) AS n FROM tpch.tiny.lineitem a CROSS JOIN tpch.tiny.lineitem b';
const NATIONS = 'SELECT count(*) AS n FROM tpch.tiny.nation';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function harnessWith(env: Record<string, string>): Promise<{ gw: ScriptedGateway; h: ExploreHarness }> {
  const gw = await startScriptedGateway({
    models: ['svc-chat'],
    chat: (body) => `\`\`\`sql\n${/slow/.test(JSON.stringify(body.messages)) ? SLOW : NATIONS}\n\`\`\``,
  });
  const h = await exploreHarness({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat', ...env });
  return { gw, h };
}

const retryAfter = (res: { headers: Headers }) => Number(res.headers.get('retry-after'));

describe('explore on the embedded engine: one user cannot hold it', { timeout: 240_000 }, () => {
  let gw: ScriptedGateway;
  let h: ExploreHarness;
  beforeAll(async () => {
    // the defaults: two workers, one call per user
    ({ gw, h } = await harnessWith({ SVC_QUERY_TIMEOUT_MS: '4000', SVC_ENGINE_QUEUE_TIMEOUT_MS: '180000' }));
  }, 120_000);
  afterAll(async () => {
    await h.close();
    await gw.close();
  });

  it("answers another user's count while one analyst sends three slow statements; the analyst's extra ones are 429", async () => {
    // the first answer keeps nation's size in the cost estimator, so the next call goes straight to the engine's queue
    expect((await h.ask(as.user, { question: 'how many nations', persist: false })).status).toBe(200);
    const slow = [1, 2, 3].map((i) =>
      h.ask(as.analyst, { question: `the slow one over line items, take ${i}`, force: true, persist: false }),
    );
    await pause(500);
    const other = h.ask(as.user, { question: 'how many nations', force: true, persist: false });
    const answers = await Promise.all(slow);
    expect((await other).status).toBe(200);
    expect((await other).body.preview_rows).toEqual([[25]]);

    expect(answers.map((a) => a.status).sort()).toEqual([429, 429, 504]);
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(refused.type).toContain('application/problem+json');
      expect(refused.body.detail).toContain('SVC_ENGINE_USER_CONCURRENCY=1');
      expect(retryAfter(refused)).toBeGreaterThanOrEqual(1);
      expect(refused.body.retryAfter).toBe(retryAfter(refused));
    }
  });
});

describe('explore on the embedded engine: a queue wait apart from the statement limit', { timeout: 240_000 }, () => {
  let gw: ScriptedGateway;
  let h: ExploreHarness;
  beforeAll(async () => {
    // one worker: the slow statement holds it for the whole of its 4 s limit
    ({ gw, h } = await harnessWith({
      SVC_ENGINE_WORKERS: '1',
      SVC_ENGINE_QUEUE_TIMEOUT_MS: '1500',
      SVC_QUERY_TIMEOUT_MS: '4000',
    }));
  }, 120_000);
  afterAll(async () => {
    await h.close();
    await gw.close();
  });

  it('answers 503 with Retry-After to a call that waited past SVC_ENGINE_QUEUE_TIMEOUT_MS for a worker', async () => {
    // the first answer keeps nation's size in the cost estimator, so the next call goes straight to the engine's queue
    expect((await h.ask(as.user, { question: 'how many nations', persist: false })).status).toBe(200);
    const slow = h.ask(as.analyst, { question: 'the slow one over line items', force: true, persist: false });
    await pause(500);
    const waited = await h.ask(as.user, { question: 'how many nations', force: true, persist: false });
    expect(waited.status).toBe(503);
    expect(waited.type).toContain('application/problem+json');
    expect(waited.body.detail).toContain('SVC_ENGINE_QUEUE_TIMEOUT_MS');
    expect(retryAfter(waited)).toBeGreaterThanOrEqual(1);
    expect((await slow).status).toBe(504);
  });
});

describe('explore on the embedded engine: the statement limit starts when the statement runs', { timeout: 240_000 }, () => {
  let gw: ScriptedGateway;
  let h: ExploreHarness;
  beforeAll(async () => {
    ({ gw, h } = await harnessWith({
      SVC_ENGINE_WORKERS: '1',
      SVC_ENGINE_QUEUE_TIMEOUT_MS: '180000',
      SVC_QUERY_TIMEOUT_MS: '3000',
    }));
  }, 120_000);
  afterAll(async () => {
    await h.close();
    await gw.close();
  });

  it('answers a call that waited longer than SVC_QUERY_TIMEOUT_MS behind a slow statement', async () => {
    expect((await h.ask(as.user, { question: 'how many nations', persist: false })).status).toBe(200);
    const slow = h.ask(as.analyst, { question: 'the slow one over line items', force: true, persist: false });
    await pause(500);
    const started = Date.now();
    const waited = await h.ask(as.user, { question: 'how many nations', force: true, persist: false });
    // it waited for the slow statement's 3 s and for a new worker, then ran within its own 3 s
    expect(Date.now() - started).toBeGreaterThan(3000);
    expect(waited.status).toBe(200);
    expect(waited.body.preview_rows).toEqual([[25]]);
    expect((await slow).status).toBe(504);
  });
});

describe('the embedded engine queue', () => {
  it("serves the service's own calls first, then users in turn, not in arrival order", () => {
    const queue = createFairQueue<string>();
    for (const [user, call] of [
      ['ana', 'ana-1'],
      ['ana', 'ana-2'],
      ['ana', 'ana-3'],
      ['bob', 'bob-1'],
      [undefined, 'columns'],
      ['cy', 'cy-1'],
      ['bob', 'bob-2'],
    ] as const)
      queue.push(user, call);
    expect(queue.remove('ana-2')).toBe(true);
    expect(queue.remove('ana-2')).toBe(false);
    const order: string[] = [];
    for (let next = queue.shift(); next; next = queue.shift()) order.push(next);
    expect(order).toEqual(['columns', 'ana-1', 'bob-1', 'cy-1', 'ana-3', 'bob-2']);
    expect(queue.size).toBe(0);
  });
});
