import { notFound } from '../platform/errors.ts';
import type { Caller } from '../platform/identity.ts';
import * as sessions from '../platform/sessions/index.ts';
import type { Citation } from './answer/citations.ts';
import { sessionKey, type AnswerTurn } from './answer/session.ts';
import type { RetrievalDeps } from './deps.ts';

// The caller's chat history: their answer sessions, listed, read, renamed and deleted. Only ever the caller's own:
// another user's session id is 404, as one that never existed. The history stays until its user deletes it (the
// audit keeps every question and answer anyway); SVC_ANSWER_SESSION_TTL still bounds which turns a follow-up is
// read with.

export type SessionView = { id: string; title: string; collection: string; turns: number; created_at: string; updated_at: string };
export type SessionTurnView = {
  question: string;
  /** The follow-up as it was rewritten and retrieved for; null when the question stood alone. */
  standalone_question: string | null;
  answer: string;
  citations: Citation[];
  collection: string;
  asked_at: string;
};

/** The newest sessions listed; older ones stay readable by id. */
export const MAX_LISTED_SESSIONS = 200;

const view = (s: sessions.SessionSummary): SessionView => ({
  id: s.id,
  title: s.title,
  collection: s.scope,
  turns: s.turns,
  created_at: s.created_at.toISOString(),
  updated_at: s.updated_at.toISOString(),
});

export async function listSessions(deps: RetrievalDeps, caller: Caller): Promise<SessionView[]> {
  return (await sessions.listSessions(deps.db, { service: 'retrieval', user: caller.user }, MAX_LISTED_SESSIONS)).map(view);
}

async function ownSession(deps: RetrievalDeps, caller: Caller, id: string) {
  const key = sessionKey(caller.user, id);
  const found = await sessions.findSession(deps.db, key);
  if (!found) throw notFound(`You have no conversation '${id}'.`);
  return { key, found };
}

/** A session with its turns, oldest first. */
export type SessionDetail = Omit<SessionView, 'turns'> & { turns: SessionTurnView[] };

export async function getSession(deps: RetrievalDeps, caller: Caller, id: string): Promise<SessionDetail> {
  const { key, found } = await ownSession(deps, caller, id);
  const turns = await sessions.sessionTurns<AnswerTurn['detail']>(deps.db, key);
  return {
    ...view(found),
    turns: turns.map((t) => ({
      question: t.question,
      standalone_question: t.detail.standalone === t.question ? null : t.detail.standalone,
      answer: t.detail.answer,
      // turns remembered before the history kept them have neither
      citations: t.detail.citations ?? [],
      collection: t.detail.collection ?? found.scope,
      asked_at: t.created_at.toISOString(),
    })),
  };
}

export async function renameSession(deps: RetrievalDeps, caller: Caller, id: string, title: string): Promise<SessionView> {
  const { key } = await ownSession(deps, caller, id);
  if (!(await sessions.renameSession(deps.db, key, title))) throw notFound(`You have no conversation '${id}'.`);
  return view((await sessions.findSession(deps.db, key))!);
}

export async function deleteSession(deps: RetrievalDeps, caller: Caller, id: string): Promise<{ deleted: string }> {
  const key = sessionKey(caller.user, id);
  if (!(await deps.db.transaction((tx) => sessions.deleteSession(tx, key)))) throw notFound(`You have no conversation '${id}'.`);
  return { deleted: id };
}
