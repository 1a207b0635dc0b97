import type { ChatMessage, ChatModel } from '../../platform/gateway/index.ts';
import { appendTurn, recentTurns, type SessionKey, type Turn } from '../../platform/sessions/index.ts';
import type { RetrievalDeps } from '../deps.ts';
import type { Citation } from './citations.ts';

// An answer session: the turns of (user, session_id) through the platform's session store. A follow-up ("and the
// year before?") is rewritten into a standalone question from the last SESSION_TURNS before anything is retrieved;
// the answer itself is then made from the standalone question alone. The session keeps up to HISTORY_TURNS turns
// with their citations, which the caller's chat history shows (GET /sessions/{id}).

export const SESSION_TURNS = 3;
export const HISTORY_TURNS = 200;
export type AnswerTurn = Turn<{ standalone: string; answer: string; collection?: string; citations?: Citation[] }>;

export const sessionKey = (user: string, session: string): SessionKey => ({ service: 'retrieval', user, session });

export function turnsOf(deps: RetrievalDeps, key: SessionKey): Promise<AnswerTurn[]> {
  return recentTurns(deps.db, key, deps.config.ANSWER_SESSION_TTL, SESSION_TURNS);
}

export function rememberTurn(
  deps: RetrievalDeps,
  key: SessionKey,
  turn: { question: string; standalone: string; answer: string; collection: string; citations: Citation[] },
): Promise<void> {
  const { question, ...detail } = turn;
  return deps.db.transaction((tx) => appendTurn(tx, key, { question, detail }, HISTORY_TURNS, turn.collection));
}

const REWRITE_PROMPT = [
  'Rewrite the last question of the conversation into one standalone question that can be understood without the',
  'conversation: resolve pronouns and elliptical references from the earlier turns. Do not answer it. Reply with the',
  'question only, on one line.',
].join('\n');

/** The follow-up as a standalone question: by the chat model, or offline by prefixing the previous question. */
export async function standaloneQuestion(
  chat: ChatModel | undefined,
  model: string,
  turns: readonly AnswerTurn[],
  question: string,
  signal?: AbortSignal,
): Promise<string> {
  const last = turns.at(-1);
  if (!last) return question;
  if (!chat) return `${last.detail.standalone} ${question}`;
  const messages: ChatMessage[] = [
    { role: 'system', content: REWRITE_PROMPT },
    ...turns.flatMap((t): ChatMessage[] => [
      { role: 'user', content: t.detail.standalone },
      { role: 'assistant', content: t.detail.answer },
    ]),
    { role: 'user', content: question },
  ];
  const res = await chat.complete({ model, messages, temperature: 0, ...(signal ? { signal } : {}) });
  const line = res.content.trim().split('\n')[0]!.trim();
  return line || question;
}
