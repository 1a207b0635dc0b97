import { appendAudit, type AuditedWrite } from '../platform/audit/index.ts';
import type { Database } from '../platform/db/index.ts';
import type { Caller } from '../platform/identity.ts';
import type { Logger } from '../platform/log.ts';
import type { ExportedResult, QueryRequest, QueryResponse } from './answer.ts';
import type { ExploreDeps } from './deps.ts';
import { exploreProblem } from './errors.ts';
import type { Trail } from './events.ts';
import { exportQuery, runQuery, type Pending } from './pipeline.ts';

// Every question, edited statement and CSV export is a record of the audit chain (service explore, action `question`,
// or `csv_export` for a download): what was asked or sent, the SQL that ran, and how it ended, from the pipeline's
// own events. The JSON log lines stay; this is the record that cannot be edited unseen. GET /history reads the
// caller's own `question` records back (history.ts). An answer's own writes (its dashboard's row) go in the record's
// statement: one round trip, and a dashboard is never stored without the record of the question that made it.
type Asked = { caller: Caller; request: QueryRequest; requestId: string; log: Logger };

export async function askQuestion(deps: ExploreDeps, q: Asked): Promise<QueryResponse> {
  let pending: Pending | undefined;
  const answer = await recorded(
    deps,
    q,
    'question',
    async (trail) => {
      const answered = await runQuery(deps, q.caller, q.request, { requestId: q.requestId, log: q.log, trail });
      pending = answered.pending;
      return answered.answer;
    },
    () => pending?.writes ?? [],
  );
  pending?.done();
  return answer;
}

/** POST /query/csv: the same pipeline up to redaction, recorded with the rows it gave. */
export function exportRows(deps: ExploreDeps, q: Asked): Promise<ExportedResult> {
  return recorded(deps, q, 'csv_export', (trail) => exportQuery(deps, q.caller, q.request, { requestId: q.requestId, log: q.log, trail }));
}

async function recorded<T extends QueryResponse | ExportedResult>(
  deps: ExploreDeps,
  q: Asked,
  action: 'question' | 'csv_export',
  run: (trail: Trail) => Promise<T>,
  writes: () => AuditedWrite[] = () => [],
): Promise<T> {
  const question = { ...q, action, trail: [] as Trail };
  let outcome: T;
  try {
    outcome = await run(question.trail);
  } catch (err) {
    // The refusal is what the caller gets, recorded or not; a failure to record it goes to the log.
    await recordQuestion(deps.db, { ...question, error: err }).catch((e: unknown) =>
      q.log.error({ err: e }, 'could not record a refused question'),
    );
    throw err;
  }
  // An answer that cannot be recorded (or whose writes cannot be stored) is not given: that failure is the 500, and
  // the question is recorded as failed when the chain still takes a record.
  const done: QueryResponse | ExportedResult = outcome;
  try {
    await recordQuestion(deps.db, 'rows' in done ? { ...question, exported: done } : { ...question, answer: done }, writes());
  } catch (err) {
    if (writes().length > 0)
      await recordQuestion(deps.db, { ...question, error: err }).catch((e: unknown) =>
        q.log.error({ err: e }, 'could not record a failed question'),
      );
    throw err;
  }
  return outcome;
}

export async function recordQuestion(
  db: Database,
  q: {
    caller: Caller;
    request: QueryRequest;
    requestId: string;
    trail: Trail;
    action?: 'question' | 'csv_export';
    answer?: QueryResponse | undefined;
    exported?: ExportedResult | undefined;
    error?: unknown;
  },
  writes: readonly AuditedWrite[] = [],
): Promise<void> {
  const field = (event: string, name: string) => q.trail.findLast((e) => e.event === event)?.fields[name];
  const problem = exploreProblem(q.error);
  // semantic_distance: the statement recorded is the caller's; what its rewrite joined is recorded beside it
  const semantic = q.trail.filter((e) => e.event === 'explore_semantic_distance').map((e) => e.fields);
  const done = q.answer ?? q.exported;
  const status = done ? 200 : (problem?.status ?? 500);
  await appendAudit(
    db,
    {
      service: 'explore',
      action: q.action ?? 'question',
      actor: q.caller.user,
      detail: {
        request_id: q.requestId,
        roles: q.caller.roles,
        question: q.request.question ?? null,
        source: q.request.sql === undefined ? 'question' : 'sql',
        session_id: q.request.session_id ?? null,
        execute: q.request.execute,
        model: (field('explore_sql_generated', 'model') as string | undefined) ?? q.answer?.model ?? q.request.model ?? null,
        sql: done?.sql ?? (field('explore_sql_generated', 'sql') as string | undefined) ?? q.request.sql ?? null,
        denied_tables: q.trail.filter((e) => e.event === 'explore_policy_denied').map((e) => e.fields.table),
        cost_bytes: q.answer?.cost_bytes ?? (field('explore_cost_gate', 'cost_bytes') as number | null | undefined) ?? null,
        outcome: done ? (q.answer?.cached ? 'cached' : 'answered') : status < 500 ? 'refused' : 'failed',
        status,
        ...(q.answer
          ? { row_count: q.answer.row_count, masked_columns: q.answer.masked_columns, dashboard_id: q.answer.dashboard_id }
          : {}),
        ...(q.exported ? { row_count: q.exported.rows.length, masked_columns: q.exported.masked_columns } : {}),
        ...(problem ? { detail: problem.detail } : {}),
        ...(semantic.length > 0 ? { semantic_distance: semantic } : {}),
      },
    },
    writes,
  );
}
