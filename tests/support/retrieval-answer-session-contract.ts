import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/platform/db/index.ts';
import { ANSWER_ENV, coastPdf, ledgerNote, sourcesOf } from './answer-fixtures.ts';
import type { OpenDb } from './retrieval-contract.ts';
import { retrievalHarness, who, type RetrievalHarness } from './retrieval.ts';
import { startScriptedGateway, type ScriptedGateway } from './scripted-gateway.ts';

// Answer sessions: the last 3 turns of (user, session_id), and a follow-up rewritten into a standalone question.
const FOLLOW_UP = 'And where are its hours written?';
const STANDALONE = 'Where are the fog horn hours at Point Reyes written?';

export function retrievalAnswerSessionContract(label: string, openDb: OpenDb) {
  describe(`answer sessions with a chat model (${label})`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let gw: ScriptedGateway;
    let h: RetrievalHarness;
    const isRewrite = (body: any) => String(body.messages[0].content).includes('standalone question');
    const rewrites = () => gw.requests.filter((r) => r.path === '/v1/chat/completions' && isRewrite(r.body));
    const answersAsked = () => gw.requests.filter((r) => r.path === '/v1/chat/completions' && !isRewrite(r.body));

    beforeAll(async () => {
      ({ db, cleanup } = await openDb());
      gw = await startScriptedGateway({ models: ['svc-chat'] });
      h = await retrievalHarness(db, { env: { ...ANSWER_ENV, SVC_CHAT_URL: gw.url } });
      await h.json('POST', '/collections', who.engineer, { slug: 'coast', name: 'Coast', allowed_roles: [] });
      await h.upload('coast', who.engineer, { name: 'coast.pdf', bytes: coastPdf(), type: 'application/pdf' });
      await h.upload('coast', who.engineer, { name: 'keepers.md', bytes: ledgerNote(), type: 'text/markdown' });
    });
    afterAll(async () => {
      await h?.close();
      await gw?.close();
      await cleanup?.();
    });
    beforeEach(() => {
      gw.requests.length = 0;
      // the rewrite resolves "its" only when it was shown the earlier fog-horn turn; answers cite what they were given
      gw.script.chat = (body) => {
        if (isRewrite(body)) {
          const last = String(body.messages.at(-1).content);
          return last === FOLLOW_UP && JSON.stringify(body.messages.slice(0, -1)).includes('fog horn') ? STANDALONE : last;
        }
        const hit = sourcesOf(body).find((s) => /ledger|thirty seconds/.test(s.text));
        return hit ? `It is in the sources [${hit.n}].` : 'The sources do not say.';
      };
    });

    const ask = (question: string, session_id?: string, as = who.engineer) =>
      h.json('POST', '/collections/coast/answer', as, { question, ...(session_id ? { session_id } : {}) });

    it('rewrites a follow-up from the session before retrieval and answers the standalone question', async () => {
      expect((await ask('How often does the fog horn at Point Reyes sound?', 's1')).body.standalone_question).toBeNull();
      expect(rewrites()).toHaveLength(0); // a first question stands alone: no rewrite call
      const res = await ask(FOLLOW_UP, 's1');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ session_id: 's1', standalone_question: STANDALONE });
      // the rewrite saw the earlier turn, and the answer was asked with the standalone question
      const rewrite = rewrites()[0]!.body.messages;
      expect(rewrite.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
      expect(rewrite.at(-1).content).toBe(FOLLOW_UP);
      expect(String(answersAsked().at(-1)!.body.messages.at(-1).content).endsWith(`Question: ${STANDALONE}`)).toBe(true);
      expect(res.body.citations.map((c: any) => c.filename)).toEqual(['keepers.md']);
      const audit = await h.json('GET', '/audit/queries?limit=1', who.engineer);
      expect(audit.body.queries[0]).toMatchObject({ question: FOLLOW_UP, answer: { session_id: 's1', standalone_question: STANDALONE } });
    });

    it("keeps one user's session from another's, and sessions apart", async () => {
      await ask('How often does the fog horn at Point Reyes sound?', 'mine');
      const other = await ask(FOLLOW_UP, 'mine', who.analyst);
      expect(other.body.standalone_question).toBeNull();
      const fresh = await ask(FOLLOW_UP, 'another');
      expect(fresh.body.standalone_question).toBeNull();
      expect(rewrites()).toHaveLength(0);
    });

    it('reads the follow-up with the last 3 turns only', async () => {
      for (let i = 1; i <= 4; i++) await ask(`Question number ${i} about the fog horn?`, 'long');
      await ask(FOLLOW_UP, 'long');
      const messages = rewrites().at(-1)!.body.messages;
      expect(messages.filter((m: any) => m.role === 'user').map((m: any) => m.content)).toEqual([
        'Question number 2 about the fog horn?',
        'Question number 3 about the fog horn?',
        'Question number 4 about the fog horn?',
        FOLLOW_UP,
      ]);
    });

    it('forgets turns older than SVC_ANSWER_SESSION_TTL', async () => {
      await ask('How often does the fog horn at Point Reyes sound?', 'old');
      // the turn ages past the hour the session remembers
      await db.query(`UPDATE session_turns SET created_at = now() - interval '2 hours' WHERE session_id = 'old'`);
      const res = await ask(FOLLOW_UP, 'old');
      expect(res.body.standalone_question).toBeNull();
      expect(rewrites()).toHaveLength(0);
    });

    it('remembers no turn of a failed answer', async () => {
      gw.failNext('/v1/chat/completions', 503, 3);
      expect((await ask('How often does the fog horn at Point Reyes sound?', 'failed')).status).toBe(502);
      const res = await ask(FOLLOW_UP, 'failed');
      expect(res.body.standalone_question).toBeNull();
    });

    it('answers 502 when the rewrite fails three times, with the audit saying so', async () => {
      await ask('How often does the fog horn at Point Reyes sound?', 'rw');
      gw.requests.length = 0;
      gw.failNext('/v1/chat/completions', 500, 3);
      const res = await ask(FOLLOW_UP, 'rw');
      expect(res.status).toBe(502);
      expect(gw.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(3);
      const audit = await h.json('GET', '/audit/queries?limit=1', who.engineer);
      expect(audit.body.queries[0]).toMatchObject({ question: FOLLOW_UP, chunks: [], answer: { outcome: 'model_failed', text: null } });
    });
  });

  describe(`answer sessions offline (${label})`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let h: RetrievalHarness;
    beforeAll(async () => {
      ({ db, cleanup } = await openDb());
      h = await retrievalHarness(db, { env: ANSWER_ENV });
      await h.json('POST', '/collections', who.engineer, { slug: 'coast', name: 'Coast', allowed_roles: [] });
      await h.upload('coast', who.engineer, { name: 'keepers.md', bytes: ledgerNote(), type: 'text/markdown' });
    });
    afterAll(async () => {
      await h?.close();
      await cleanup?.();
    });

    it('reads a follow-up with the previous question when no model can rewrite it', async () => {
      const first = await h.json('POST', '/collections/coast/answer', who.engineer, {
        question: 'Who writes the fog horn hours?',
        session_id: 'x',
      });
      expect(first.body.grounded).toBe(true);
      const res = await h.json('POST', '/collections/coast/answer', who.engineer, { question: 'And in what?', session_id: 'x' });
      expect(res.body).toMatchObject({ grounded: true, standalone_question: 'Who writes the fog horn hours? And in what?' });
      expect(res.body.citations[0].filename).toBe('keepers.md');
    });
  });
}
