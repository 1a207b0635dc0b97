import { appendAudit } from '../platform/audit/index.ts';
import type { Database } from '../platform/db/index.ts';
import type { Caller } from '../platform/identity.ts';
import type { Logger } from '../platform/log.ts';
import type { QueryRequest, QueryResponse } from './answer.ts';
import type { ExploreDeps } from './deps.ts';
import { exploreProblem } from './errors.ts';
import type { Trail } from './events.ts';
import { runQuery } from './pipeline.ts';

// Every question is a record of the audit chain (service explore, action question): what was asked, the SQL the
// model wrote, and how it ended, from the pipeline's own events. The JSON log lines stay; this is the record that
// cannot be edited unseen.
export async function askQuestion(
  deps: ExploreDeps,
  q: { caller: Caller; request: QueryRequest; requestId: string; log: Logger },
): Promise<QueryResponse> {
  const question = { ...q, trail: [] as Trail };
  let answer: QueryResponse;
  try {
    answer = await runQuery(deps, q.caller, q.request, { requestId: q.requestId, log: q.log, trail: question.trail });
  } catch (err) {
    // The refusal is what the caller gets, recorded or not; a failure to record it goes to the log.
    await recordQuestion(deps.db, { ...question, error: err }).catch((e: unknown) =>
      q.log.error({ err: e }, 'could not record a refused question'),
    );
    throw err;
  }
  // An answer that cannot be recorded is not given: that failure is the 500.
  await recordQuestion(deps.db, { ...question, answer });
  return answer;
}

export async function recordQuestion(
  db: Database,
  q: { caller: Caller; request: QueryRequest; requestId: string; trail: Trail; answer?: QueryResponse; error?: unknown },
): Promise<void> {
  const field = (event: string, name: string) => q.trail.findLast((e) => e.event === event)?.fields[name];
  const problem = exploreProblem(q.error);
  const status = q.answer ? 200 : (problem?.status ?? 500);
  await appendAudit(db, {
    service: 'explore',
    action: 'question',
    actor: q.caller.user,
    detail: {
      request_id: q.requestId,
      roles: q.caller.roles,
      question: q.request.question,
      session_id: q.request.session_id ?? null,
      execute: q.request.execute,
      model: (field('explore_sql_generated', 'model') as string | undefined) ?? q.answer?.model ?? q.request.model ?? null,
      sql: q.answer?.sql ?? (field('explore_sql_generated', 'sql') as string | undefined) ?? null,
      denied_tables: q.trail.filter((e) => e.event === 'explore_policy_denied').map((e) => e.fields.table),
      cost_bytes: q.answer?.cost_bytes ?? (field('explore_cost_gate', 'cost_bytes') as number | null | undefined) ?? null,
      outcome: q.answer ? (q.answer.cached ? 'cached' : 'answered') : status < 500 ? 'refused' : 'failed',
      status,
      ...(q.answer ? { row_count: q.answer.row_count, masked_columns: q.answer.masked_columns, dashboard_id: q.answer.dashboard_id } : {}),
      ...(problem ? { detail: problem.detail } : {}),
    },
  });
}
