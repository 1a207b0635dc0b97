import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exploreHttpContract } from '../support/explore-http-contract.ts';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';

exploreHttpContract((env) => exploreHarness(env));

// The embedded engine runs one statement at a time: a statement past its limit is cancelled and the next caller
// is served, never left waiting.
describe('explore on the embedded engine, one slow statement', () => {
  let gw: ScriptedGateway;
  let h: ExploreHarness;
  beforeAll(async () => {
    gw = await startScriptedGateway({
      models: ['svc-chat'],
      chat: (body) =>
        /slow/.test(JSON.stringify(body.messages))
          ? '```sql\nSELECT count(*) AS n FROM tpch.tiny.lineitem a CROSS JOIN tpch.tiny.lineitem b\n```'
          : '```sql\nSELECT count(*) AS n FROM tpch.tiny.nation\n```',
    });
    h = await exploreHarness({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat', SVC_QUERY_TIMEOUT_MS: '1500' });
  }, 60_000);
  afterAll(async () => {
    await h.close();
    await gw.close();
  });

  it('answers another user after a statement times out (504)', async () => {
    const slow = h.ask(as.analyst, { question: 'the slow one over line items', force: true });
    await new Promise((r) => setTimeout(r, 200));
    const other = h.ask(as.user, { question: 'how many nations', force: true, persist: false });
    expect((await slow).status).toBe(504);
    const answered = await other;
    // the other call waited behind the slow one: it either ran on the replacement worker or timed out on its own
    // limit, but it was answered
    expect([200, 504]).toContain(answered.status);
    expect((await h.ask(as.user, { question: 'how many nations now', force: true, persist: false })).body.preview_rows).toEqual([[25]]);
  }, 120_000);
});
