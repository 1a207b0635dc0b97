import type { Caller } from '../platform/identity.ts';
import type { RetrievalDeps } from './deps.ts';
import { feedbackOn, type Feedback } from './feedback.ts';
import * as store from './store.ts';

export type AuditView = {
  id: number;
  at: string;
  user: string;
  roles: string[];
  collection: string;
  question: string;
  top_k: number;
  chunks: { chunk_id: string; score: number }[];
  latency_ms: number;
  /** The filter the retrieval was narrowed by, when it had one. */
  filter?: NonNullable<store.AuditRecord['filter']>;
  /** What an answer gave, for a retrieval made to answer (`POST /collections/{slug}/answer`). */
  answer?: store.AnswerRecord;
  /** The latest thumbs up or down its asker gave the answer. */
  feedback?: Feedback;
};

/** Newest first. The collections policy says who reads everyone's retrievals; everyone else reads their own. */
export async function listRetrievals(deps: RetrievalDeps, caller: Caller, limit: number): Promise<AuditView[]> {
  const everyone = await deps.policy.decide('collections', {
    user: caller.user,
    roles: caller.roles,
    action: 'audit',
    collection: { slug: '', allowed_roles: [] },
  });
  const rows = await store.listAudit(deps.db, everyone.allow ? { limit } : { limit, user: caller.user });
  const feedback = await feedbackOn(
    deps,
    rows.filter((r) => r.answer).map((r) => r.id),
  );
  return rows.map((r) => ({
    id: r.id,
    at: r.at.toISOString(),
    user: r.user_id,
    roles: r.roles,
    collection: r.collection,
    question: r.question,
    top_k: r.top_k,
    chunks: r.chunk_ids.map((chunk_id, i) => ({ chunk_id, score: r.scores[i]! })),
    latency_ms: r.latency_ms,
    ...(r.filter ? { filter: r.filter } : {}),
    ...(r.answer ? { answer: r.answer } : {}),
    ...(feedback.has(r.id) ? { feedback: feedback.get(r.id)! } : {}),
  }));
}
