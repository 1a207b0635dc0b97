import { invalidParameter } from '../errors.ts';
import type { Comparison } from '../search/filter.ts';
import { checkOp, compare, LIST_OPS, type Params, STRING_OPS, stringValue } from '../search/sql.ts';

// search_traces' span filters, where MLflow 3.17.2 has them: `span.name`, `span.type`, `span.status` (OK, ERROR,
// UNSET) and `span.attributes.<key>`; a trace matches when one of its spans does. An attribute compares its value
// as text (a string as it is, a number or boolean as written), where MLflow matches a pattern in the span's stored
// JSON: equality is what a user means and MLflow's LIKE patterns on plain values match here too.

const COLUMNS: Record<string, string> = {
  name: 's.name',
  type: 's.span_type',
  status: `(CASE s.status_code WHEN 1 THEN 'OK' WHEN 2 THEN 'ERROR' ELSE 'UNSET' END)`,
};
const OPS = [...STRING_OPS, ...LIST_OPS];
const ATTRIBUTE_TEXT = `COALESCE(a.value->'value'->>'stringValue', a.value->'value'->>'intValue', a.value->'value'->>'doubleValue', a.value->'value'->>'boolValue')`;

export const isSpanEntity = (entity: string | undefined) => entity === 'span';

export function spanCondition(c: Comparison, params: Params): string {
  const { key } = c.identifier;
  checkOp(c, OPS, `span.${key}`);
  const value = c.value.kind === 'list' ? c.value.values.map(String) : stringValue(c.value, `span.${key}`);
  if (key.startsWith('attributes.') && key.length > 'attributes.'.length) {
    const name = params.add(key.slice('attributes.'.length));
    return `EXISTS (SELECT 1 FROM tracker_spans s CROSS JOIN LATERAL jsonb_array_elements(s.attributes) AS a(value)
      WHERE s.trace_id = t.trace_id AND a.value->>'key' = ${name} AND ${compare(ATTRIBUTE_TEXT, c.op, value, params)})`;
  }
  const column = Object.hasOwn(COLUMNS, key) ? COLUMNS[key] : undefined;
  if (!column) {
    throw invalidParameter(`Invalid span attribute '${key}'. Supported attributes: name, status, type, attributes.<attribute_name>.`);
  }
  return `EXISTS (SELECT 1 FROM tracker_spans s WHERE s.trace_id = t.trace_id AND ${compare(column, c.op, value, params)})`;
}
