import { listRecords } from '../platform/audit/index.ts';
import type { Sql } from '../platform/db/index.ts';
import type { Caller } from '../platform/identity.ts';

// GET /history: the caller's own questions and statement runs, newest first, read back from the audit chain, where
// every one is already recorded with its SQL, outcome, row count and dashboard (questions.ts). Nothing is stored
// twice; what the audit retention (`svc audit prune`) removes leaves the history with it.

export type HistoryItem = {
  /** The record's place in the audit chain; a page's last id is the next page's `before`. */
  id: number;
  source: 'question' | 'sql';
  question: string | null;
  sql: string | null;
  outcome: 'answered' | 'cached' | 'refused' | 'failed';
  status: number;
  row_count: number | null;
  dashboard_id: string | null;
  created_at: string;
};

export async function listHistory(
  sql: Sql,
  caller: Caller,
  page: { limit: number; before?: number | undefined },
): Promise<{ history: HistoryItem[]; next_before: number | null }> {
  const records = await listRecords(sql, {
    service: 'explore',
    action: 'question',
    actor: caller.user,
    limit: page.limit,
    before: page.before,
  });
  const history = records.map((r): HistoryItem => {
    const d = r.detail as Record<string, unknown>;
    return {
      id: Number(r.seq),
      source: d.source === 'sql' ? 'sql' : 'question',
      question: typeof d.question === 'string' ? d.question : null,
      sql: typeof d.sql === 'string' ? d.sql : null,
      outcome: (['answered', 'cached', 'refused', 'failed'] as const).find((o) => o === d.outcome) ?? 'failed',
      status: typeof d.status === 'number' ? d.status : 500,
      row_count: typeof d.row_count === 'number' ? d.row_count : null,
      dashboard_id: typeof d.dashboard_id === 'string' ? d.dashboard_id : null,
      created_at: new Date(r.at).toISOString(),
    };
  });
  return { history, next_before: history.length === page.limit ? history.at(-1)!.id : null };
}
