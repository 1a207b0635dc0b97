import type { Sql } from '../../platform/db/index.ts';

// An assessment's row and its JSON, shared by the assessment endpoints (assessments.ts) and every trace read
// (load.ts), which lists a trace's assessments in its TraceInfo.

export type AssessmentRow = {
  assessment_id: string;
  trace_id: string;
  name: string;
  span_id: string | null;
  source: unknown;
  kind: 'feedback' | 'expectation';
  body: Record<string, unknown>;
  rationale: string | null;
  error: unknown;
  metadata: Record<string, string> | null;
  overrides: string | null;
  valid: boolean;
  create_time_ms: number;
  last_update_time_ms: number;
};

/** An assessment as protobuf's JSON writes it (times as RFC 3339, the oneof as its one field). */
export function assessmentJson(r: AssessmentRow) {
  return {
    assessment_id: r.assessment_id,
    assessment_name: r.name,
    trace_id: r.trace_id,
    ...(r.span_id ? { span_id: r.span_id } : {}),
    source: r.source,
    create_time: new Date(Number(r.create_time_ms)).toISOString(),
    last_update_time: new Date(Number(r.last_update_time_ms)).toISOString(),
    [r.kind]: r.body,
    ...(r.rationale !== null ? { rationale: r.rationale } : {}),
    ...(r.error ? { error: r.error } : {}),
    ...(r.metadata && Object.keys(r.metadata).length ? { metadata: r.metadata } : {}),
    ...(r.overrides ? { overrides: r.overrides } : {}),
    valid: r.valid,
  };
}

export type AssessmentJson = ReturnType<typeof assessmentJson>;

/** The assessments of these traces, oldest first, by trace. */
export async function assessmentsOf(db: Sql, traceIds: string[]): Promise<Map<string, AssessmentJson[]>> {
  const out = new Map<string, AssessmentJson[]>();
  if (traceIds.length === 0) return out;
  const rows = await db.query<AssessmentRow>(
    `SELECT * FROM tracker_assessments WHERE trace_id = ANY($1::text[]) ORDER BY create_time_ms, logged_order`,
    [traceIds],
  );
  for (const r of rows) out.set(r.trace_id, [...(out.get(r.trace_id) ?? []), assessmentJson(r)]);
  return out;
}
