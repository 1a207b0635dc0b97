import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, openPglite, type Database } from '../../src/platform/db/index.ts';
import { listSessions } from '../../src/platform/sessions/index.ts';
import { ANSWER_ENV, coastPdf, FOG_SENTENCE, ledgerNote } from '../support/answer-fixtures.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';

// The caller's chat history through HTTP: answer sessions listed newest first with their turns, renamed, deleted,
// and never another user's (404, as one that does not exist).
describe('answer sessions as a chat history', () => {
  let db: Database;
  let h: RetrievalHarness;
  beforeAll(async () => {
    db = await openPglite({});
    h = await retrievalHarness(db, { env: ANSWER_ENV });
    await h.json('POST', '/collections', who.engineer, { slug: 'coast', name: 'Coast', allowed_roles: [] });
    await h.upload('coast', who.engineer, { name: 'coast.pdf', bytes: coastPdf(), type: 'application/pdf' });
    await h.upload('coast', who.engineer, { name: 'keepers.md', bytes: ledgerNote(), type: 'text/markdown' });
  });
  afterAll(async () => {
    await h?.close();
    await db?.close();
  });

  const ask = (question: string, session_id: string, as = who.engineer) =>
    h.json('POST', '/collections/coast/answer', as, { question, session_id });

  it('lists only the caller’s sessions, newest first, titled by their first question', async () => {
    expect((await ask('How often does the fog horn at Point Reyes sound?', 'fog')).status).toBe(200);
    expect((await ask('And who writes the hours?', 'fog')).body.standalone_question).toBe(
      'How often does the fog horn at Point Reyes sound? And who writes the hours?',
    );
    await ask('Who writes the fog horn hours?', 'ledger');
    await ask('How often does the fog horn sound?', 'analyst-own', who.analyst);

    const mine = await h.json('GET', '/sessions', who.engineer);
    expect(mine.status).toBe(200);
    expect(mine.body.sessions.map((s: any) => [s.id, s.title, s.collection, s.turns])).toEqual([
      ['ledger', 'Who writes the fog horn hours?', 'coast', 1],
      ['fog', 'How often does the fog horn at Point Reyes sound?', 'coast', 2],
    ]);
    const theirs = await h.json('GET', '/sessions', who.analyst);
    expect(theirs.body.sessions.map((s: any) => s.id)).toEqual(['analyst-own']);
  });

  it('reads a session’s turns with their standalone questions, answers and citations', async () => {
    const res = await h.json('GET', '/sessions/fog', who.engineer);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'fog', collection: 'coast' });
    const [first, second] = res.body.turns;
    expect(first).toMatchObject({ question: 'How often does the fog horn at Point Reyes sound?', standalone_question: null });
    expect(first.answer).toContain(FOG_SENTENCE);
    expect(first.citations[0]).toMatchObject({ filename: 'coast.pdf', page: 3, quote: FOG_SENTENCE });
    expect(second.standalone_question).toBe('How often does the fog horn at Point Reyes sound? And who writes the hours?');
  });

  it('renames a session, and a follow-up keeps the name', async () => {
    const res = await h.json('PATCH', '/sessions/fog', who.engineer, { title: 'Fog horn' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'fog', title: 'Fog horn', turns: 2 });
    await ask('And in what book?', 'fog');
    const listed = (await h.json('GET', '/sessions', who.engineer)).body.sessions;
    expect(listed[0]).toMatchObject({ id: 'fog', title: 'Fog horn', turns: 3 });
    expect((await h.json('PATCH', '/sessions/fog', who.engineer, { title: '  ' })).status).toBe(400);
  });

  it('deletes a session with its turns: a follow-up with its id starts afresh', async () => {
    expect((await h.json('DELETE', '/sessions/ledger', who.engineer)).body).toEqual({ deleted: 'ledger' });
    expect((await h.json('GET', '/sessions/ledger', who.engineer)).status).toBe(404);
    expect((await h.json('GET', '/sessions', who.engineer)).body.sessions.map((s: any) => s.id)).toEqual(['fog']);
    expect((await ask('And in what?', 'ledger')).body.standalone_question).toBeNull();
  });

  describe.each([
    ['GET', undefined],
    ['PATCH', { title: 'Mine now' }],
    ['DELETE', undefined],
  ])('%s of another user’s session', (method, body) => {
    it('is 404 and changes nothing', async () => {
      const res = await h.json(method, '/sessions/analyst-own', who.engineer, body);
      expect(res.status).toBe(404);
      expect(res.body.detail).toBe("You have no conversation 'analyst-own'.");
      const theirs = await h.json('GET', '/sessions/analyst-own', who.analyst);
      expect(theirs.body).toMatchObject({ title: 'How often does the fog horn sound?' });
      expect(theirs.body.turns).toHaveLength(1);
    });
  });

  it('needs a caller', async () => {
    expect((await h.json('GET', '/sessions')).status).toBe(401);
  });
});

// Sessions whose turns were kept before migration sessions/002 are listed too, titled by their first question.
describe('migration sessions/002 on sessions that already have turns', () => {
  it('gives each (service, user, session) its row', async () => {
    const db = await openPglite({});
    try {
      const all = await loadMigrations(new URL('../../src/platform/sessions/migrations/', import.meta.url));
      await migrate(
        db,
        'sessions',
        all.filter((m) => m.id < '002'),
      );
      const turn = (user: string, session: string, question: string) =>
        db.query(`INSERT INTO session_turns (service, user_id, session_id, question) VALUES ('retrieval', $1, $2, $3)`, [
          user,
          session,
          question,
        ]);
      await turn('eve', 'a', 'First of a');
      await turn('eve', 'a', 'Second of a');
      await turn('ana', 'a', 'First of ana');
      await migrate(db, 'sessions', all);
      const eve = await listSessions(db, { service: 'retrieval', user: 'eve' }, 10);
      expect(eve.map((s) => [s.id, s.title, s.turns, s.scope])).toEqual([['a', 'First of a', 2, '']]);
      expect((await listSessions(db, { service: 'retrieval', user: 'ana' }, 10)).map((s) => s.title)).toEqual(['First of ana']);
    } finally {
      await db.close();
    }
  });
});
