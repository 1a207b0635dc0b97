import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Database, Sql } from '../../platform/db/index.ts';
import { doesNotExist, invalidParameter } from '../errors.ts';
import { optionalStr, protoEnum, requiredStr } from '../wire/fields.ts';
import { assessmentJson, type AssessmentRow as Row } from './assessment-rows.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import { existingTrace } from './store.ts';

// Assessments of a trace (MLflow 3): feedback (a judge's or a person's verdict, or the error that kept one from
// being given) and expectations (the ground truth). Created, read, updated and deleted as MLflow's store does: an
// assessment that overrides another makes that one invalid, and deleting it makes that one valid again; an update
// keeps the source and span and merges the metadata. Each is kept as the JSON of its protobuf message, so a value
// (any JSON) reads back exactly as it was sent.

const SOURCE_TYPES = { 0: 'SOURCE_TYPE_UNSPECIFIED', 1: 'HUMAN', 2: 'LLM_JUDGE', 3: 'CODE' } as const;
type SourceType = (typeof SOURCE_TYPES)[keyof typeof SOURCE_TYPES];

const json = z.unknown().optional();
const timestamp = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'an RFC 3339 timestamp')
  .transform((s) => Date.parse(s))
  .optional();
const metadata = z.record(z.string(), z.string()).optional();

const assessment = z.object({
  assessment_id: optionalStr(),
  assessment_name: requiredStr(),
  trace_id: optionalStr(),
  span_id: optionalStr(),
  source: z.object({ source_type: protoEnum<SourceType[]>(SOURCE_TYPES).optional(), source_id: optionalStr() }).optional(),
  create_time: timestamp,
  last_update_time: timestamp,
  feedback: z.object({ value: json, error: json }).partial().optional(),
  expectation: z.object({ value: json, serialized_value: json }).partial().optional(),
  rationale: optionalStr(),
  error: json,
  metadata,
  overrides: optionalStr(),
  valid: z.boolean().optional(),
});

export const CreateAssessment = z.object({ assessment });
export const UpdateAssessment = z.object({
  assessment: assessment.partial(),
  update_mask: z.union([z.string().transform((s) => ({ paths: s.split(',') })), z.object({ paths: z.array(z.string()) })]),
});

export async function createAssessment(db: Database, traceId: string, m: z.infer<typeof CreateAssessment>['assessment']) {
  await existingTrace(db, traceId);
  const kind = m.feedback ? 'feedback' : m.expectation ? 'expectation' : undefined;
  if (!kind || (m.feedback && m.expectation)) throw invalidParameter('An assessment must have exactly one of `feedback` or `expectation`.');
  const now = Date.now();
  const id = m.assessment_id || `a-${randomUUID().replaceAll('-', '')}`;
  return db.transaction(async (tx) => {
    if (m.overrides) {
      const overridden = await tx.query(
        `UPDATE tracker_assessments SET valid = false WHERE trace_id = $1 AND assessment_id = $2 RETURNING assessment_id`,
        [traceId, m.overrides],
      );
      if (overridden.length === 0) throw doesNotExist(`Assessment with ID '${m.overrides}' not found for trace '${traceId}'`);
    }
    const [row] = await tx.query<Row>(
      `INSERT INTO tracker_assessments (assessment_id, trace_id, name, span_id, source, kind, body, rationale, error, metadata,
         overrides, valid, create_time_ms, last_update_time_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
      [
        id,
        traceId,
        m.assessment_name,
        m.span_id || null,
        JSON.stringify(m.source ?? { source_type: 'SOURCE_TYPE_UNSPECIFIED' }),
        kind,
        JSON.stringify(m.feedback ?? m.expectation),
        m.rationale ?? null,
        m.error === undefined ? null : JSON.stringify(m.error),
        m.metadata ? JSON.stringify(m.metadata) : null,
        m.overrides || null,
        m.valid ?? true,
        m.create_time ?? now,
        m.last_update_time ?? m.create_time ?? now,
      ],
    );
    return assessmentJson(row!);
  });
}

async function rowOf(db: Sql, traceId: string, assessmentId: string): Promise<Row> {
  const [row] = await db.query<Row>(
    `SELECT * FROM tracker_assessments WHERE trace_id = $1 AND assessment_id = $2
       AND trace_id IN (SELECT trace_id FROM tracker_traces WHERE ${experimentInWorkspace('experiment_id', '$3')})`,
    [traceId, assessmentId, requestWorkspace()],
  );
  if (!row) throw doesNotExist(`Assessment with ID '${assessmentId}' for trace with ID '${traceId}' not found`);
  return row;
}

export async function getAssessment(db: Sql, traceId: string, assessmentId: string) {
  return assessmentJson(await rowOf(db, traceId, assessmentId));
}

/** The fields the mask names change; source, span and overrides stay; metadata merges, the new keys winning. */
export async function updateAssessment(db: Database, traceId: string, assessmentId: string, m: z.infer<typeof UpdateAssessment>) {
  const existing = await rowOf(db, traceId, assessmentId);
  // protobuf's JSON writes a FieldMask's paths in lowerCamelCase (assessmentName); the REST form is snake_case
  const paths = new Set(m.update_mask.paths.map((p) => p.trim().replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)));
  const a = m.assessment;
  if (paths.has('feedback') && paths.has('expectation'))
    throw invalidParameter('Cannot specify both `expectation` and `feedback` parameters.');
  if (paths.has('expectation') && existing.kind !== 'expectation')
    throw invalidParameter('Cannot update expectation value on a Feedback assessment.');
  if (paths.has('feedback') && existing.kind !== 'feedback')
    throw invalidParameter('Cannot update feedback value on an Expectation assessment.');
  const body = paths.has(existing.kind) ? (a[existing.kind] ?? {}) : existing.body;
  const merged = paths.has('metadata') ? { ...(existing.metadata ?? {}), ...(a.metadata ?? {}) } : existing.metadata;
  const [row] = await db.query<Row>(
    `UPDATE tracker_assessments SET name = $3, body = $4, rationale = $5, metadata = $6, last_update_time_ms = $7
     WHERE trace_id = $1 AND assessment_id = $2 RETURNING *`,
    [
      traceId,
      assessmentId,
      paths.has('assessment_name') && a.assessment_name ? a.assessment_name : existing.name,
      JSON.stringify(body),
      paths.has('rationale') && existing.kind === 'feedback' ? (a.rationale ?? null) : existing.rationale,
      merged && Object.keys(merged).length ? JSON.stringify(merged) : null,
      Date.now(),
    ],
  );
  return assessmentJson(row!);
}

/** Idempotent, as MLflow's: an assessment already gone is no error. The one it overrode is valid again. */
export async function deleteAssessment(db: Database, traceId: string, assessmentId: string): Promise<void> {
  await existingTrace(db, traceId);
  await db.transaction(async (tx) => {
    const [gone] = await tx.query<{ overrides: string | null }>(
      `DELETE FROM tracker_assessments WHERE trace_id = $1 AND assessment_id = $2 RETURNING overrides`,
      [traceId, assessmentId],
    );
    if (gone?.overrides)
      await tx.query(`UPDATE tracker_assessments SET valid = true WHERE trace_id = $1 AND assessment_id = $2`, [traceId, gone.overrides]);
  });
}
