import type { Logger } from '../platform/log.ts';

// The audit events of the specification: one JSON log line each, with the request id, user and role.
export type ExploreEvent =
  | 'explore_query_received'
  | 'explore_cache_hit'
  | 'explore_no_tables'
  | 'explore_policy_denied'
  | 'explore_sql_generated'
  | 'explore_semantic_distance'
  | 'explore_cost_gate'
  | 'explore_engine_executed'
  | 'explore_pii_masked'
  | 'explore_dashboard_published'
  | 'explore_feedback';

/** `trail`, when given, collects the events of one question for its audit record (questions.ts). */
export type EventContext = { log: Logger; requestId: string; user: string; role: string; trail?: Trail | undefined };
export type Trail = { event: ExploreEvent; fields: Record<string, unknown> }[];

export function emit(ctx: EventContext, event: ExploreEvent, fields: Record<string, unknown> = {}): void {
  ctx.log.info({ event, requestId: ctx.requestId, user: ctx.user, role: ctx.role, ...fields }, event);
  ctx.trail?.push({ event, fields });
}
