import { appendAudit, listRecordsAbout, readRecords } from '../platform/audit/index.ts';
import { notFound } from '../platform/errors.ts';
import type { Caller } from '../platform/identity.ts';
import type { RetrievalDeps } from './deps.ts';
import type { AnswerRecord } from './store.ts';

// Thumbs up or down on an answer, by the person it answered. The audit chain is append-only, so a rating is a record
// of its own (`answer_feedback`) naming the answer's record; the audit list shows the latest rating with the answer.

export type Rating = 'up' | 'down';
export type Feedback = { rating: Rating; comment: string; at: string };

export async function rateAnswer(
  deps: RetrievalDeps,
  caller: Caller,
  queryId: number,
  input: { rating: Rating; comment?: string | undefined },
): Promise<Feedback & { query_id: number }> {
  const [record] = await readRecords(deps.db, queryId, 1, queryId);
  const answer = (record?.detail as { answer?: AnswerRecord } | undefined)?.answer;
  // someone else's record, a plain query or a failed answer: there is nothing of theirs to rate
  if (
    !record ||
    record.service !== 'retrieval' ||
    record.action !== 'query' ||
    record.actor !== caller.user ||
    !answer ||
    !['answered', 'no_context'].includes(answer.outcome)
  ) {
    throw notFound(`You have no answer with the audit id ${queryId}: rate an answer you were given, by the audit_id it came with.`);
  }
  const at = new Date();
  const comment = input.comment ?? '';
  await appendAudit(deps.db, {
    service: 'retrieval',
    action: 'answer_feedback',
    actor: caller.user,
    at,
    detail: { query_id: queryId, rating: input.rating, comment },
  });
  return { query_id: queryId, rating: input.rating, comment, at: at.toISOString() };
}

/** The latest rating of each of these answers. */
export async function feedbackOn(deps: RetrievalDeps, queryIds: number[]): Promise<Map<number, Feedback>> {
  const records = await listRecordsAbout(deps.db, { service: 'retrieval', action: 'answer_feedback', key: 'query_id', ids: queryIds });
  const out = new Map<number, Feedback>();
  for (const r of records) {
    const d = r.detail as { query_id: number; rating: Rating; comment: string };
    out.set(Number(d.query_id), { rating: d.rating, comment: d.comment, at: r.at.toISOString() });
  }
  return out;
}
