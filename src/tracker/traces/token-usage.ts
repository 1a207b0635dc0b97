import type { Sql } from '../../platform/db/index.ts';
import { type AnyValue, anyValueOf, type OtlpSpan } from './otlp.ts';
import { pyDumps } from './py-json.ts';

// A trace's token usage, as MLflow's store sums it from its spans' `mlflow.chat.tokenUsage`: a span's usage counts
// unless a span above it carries usage too (a parent that rolls up its children's calls is not counted twice). It is
// kept in the trace's `mlflow.trace.tokenUsage` metadata, where MLflow's client and UI read it.

import { CHAT_USAGE } from './otel-conventions.ts';
export const TOKEN_USAGE_METADATA = 'mlflow.trace.tokenUsage';
const KEYS = ['input_tokens', 'output_tokens', 'total_tokens'] as const;

export const carriesUsage = (spans: OtlpSpan[]) => spans.some((s) => s.attributes.some((a) => a.key === CHAT_USAGE));

type Node = { span_id: string; parent_span_id: string | null; usage: AnyValue | null };

/** The usage of every span the trace holds so far, in the metadata's JSON text; undefined when none has any. */
export async function traceTokenUsage(tx: Sql, traceId: string): Promise<string | undefined> {
  const nodes = await tx.query<Node>(
    `SELECT span_id, parent_span_id,
       (SELECT a->'value' FROM jsonb_array_elements(attributes) a WHERE a->>'key' = $2 LIMIT 1) AS usage
     FROM tracker_spans WHERE trace_id = $1`,
    [traceId, CHAT_USAGE],
  );
  const byId = new Map(nodes.map((n) => [n.span_id, n]));
  const aboveHasUsage = (n: Node) => {
    for (
      let p = n.parent_span_id ? byId.get(n.parent_span_id) : undefined;
      p;
      p = p.parent_span_id ? byId.get(p.parent_span_id) : undefined
    ) {
      if (p.usage) return true;
    }
    return false;
  };
  const totals = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  let counted = false;
  for (const n of nodes) {
    if (!n.usage || aboveHasUsage(n)) continue;
    const usage = anyValueOf(n.usage);
    if (usage === null || typeof usage !== 'object') continue;
    for (const k of KEYS) {
      const v = Number((usage as Record<string, unknown>)[k] ?? 0);
      if (Number.isFinite(v)) totals[k] += v;
    }
    counted = true;
  }
  return counted ? pyDumps(totals) : undefined;
}
