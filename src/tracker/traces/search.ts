import type { Sql } from '../../platform/db/types.ts';
import { invalidParameter } from '../errors.ts';
import { parseFilter, parseOrderBy, type Comparison } from '../search/filter.ts';
import { checkMaxResults, page, startOffset } from '../search/paging.ts';
import {
  attributeNamed,
  checkDistinct,
  checkOp,
  compare,
  compareNumeric,
  orderEntries,
  Params,
  SEARCH_STATEMENT,
  STRING_OPS,
  stringValue,
  filterConditions,
  type ChildRows,
  type RowTest,
} from '../search/sql.ts';
import { lookupTable } from '../../platform/lookup-table.ts';
import { isSpanEntity, spanCondition } from './span-filter.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import type { TraceScope } from './access.ts';

// search_traces over the experiments given: filters on tags (`tags.<key>`), request metadata
// (`metadata.<key>`, `request_metadata.<key>`), spans (`span.name`, span-filter.ts) and the attributes below; ordered by them, newest first by default.
// One statement a page, like every search here.

const MAX_TRACES_PAGE = 500;

const ATTRIBUTES: Record<string, { column: string; numeric: boolean }> = lookupTable({
  trace_id: { column: 't.trace_id', numeric: false },
  request_id: { column: 't.trace_id', numeric: false },
  client_request_id: { column: 't.client_request_id', numeric: false },
  status: { column: 't.state', numeric: false },
  state: { column: 't.state', numeric: false },
  timestamp_ms: { column: 't.request_time', numeric: true },
  timestamp: { column: 't.request_time', numeric: true },
  request_time: { column: 't.request_time', numeric: true },
  execution_time_ms: { column: 't.execution_duration', numeric: true },
  execution_duration: { column: 't.execution_duration', numeric: true },
});
const ATTRIBUTE_ENTITIES = [undefined, 'attribute', 'attributes', 'trace'];

const attributeOf = (key: string) => attributeNamed(ATTRIBUTES, key);

function keyedTable(entity: string | undefined): string | undefined {
  if (entity === 'tag' || entity === 'tags') return 'tracker_trace_tags';
  if (entity === 'metadata' || entity === 'request_metadata') return 'tracker_trace_metadata';
  if (ATTRIBUTE_ENTITIES.includes(entity)) return undefined;
  throw invalidParameter(
    `Invalid entity type '${entity}'. Valid entity types are ('attribute', 'trace', 'tag', 'tags', 'metadata', 'request_metadata', 'span')`,
  );
}

const ROWS: Record<string, ChildRows> = {
  tracker_trace_tags: { from: 'tracker_trace_tags x', on: 'x.trace_id = t.trace_id', key: 'x.key' },
  tracker_trace_metadata: { from: 'tracker_trace_metadata x', on: 'x.trace_id = t.trace_id', key: 'x.key' },
};

function condition(c: Comparison, params: Params): string | RowTest {
  const { entity, key } = c.identifier;
  if (isSpanEntity(entity)) return spanCondition(c, params);
  const table = keyedTable(entity);
  if (table) {
    checkOp(c, STRING_OPS, `${entity} '${key}'`);
    const k = params.add(key);
    return { rows: ROWS[table]!, key: k, test: `x.key = ${k} AND ${compare('x.value', c.op, stringValue(c.value, entity!), params)}` };
  }
  if (key === 'run_id') return runCondition(c, params);
  const attribute = attributeOf(key);
  if (attribute.numeric) return compareNumeric(attribute.column, key, c, params);
  checkOp(c, STRING_OPS, `attribute '${key}'`);
  return compare(attribute.column, c.op, stringValue(c.value, 'attributes'), params);
}

/** `run_id = '…'` (what search_traces(run_id=…) sends): traces linked to the run, or whose metadata names it. */
function runCondition(c: Comparison, params: Params): string {
  if (c.op !== '=') throw invalidParameter(`Invalid comparator '${c.op}' for attribute 'run_id': only '=' is supported.`);
  const run = params.add(stringValue(c.value, 'attributes'));
  return `(EXISTS (SELECT 1 FROM tracker_trace_runs l WHERE l.trace_id = t.trace_id AND l.run_id = ${run})
    OR EXISTS (SELECT 1 FROM tracker_trace_metadata m WHERE m.trace_id = t.trace_id AND m.key = 'mlflow.sourceRun' AND m.value = ${run}))`;
}

const scopeCondition = (scope: TraceScope, params: Params) =>
  `(t.experiment_id <> ${params.add(scope.experimentId)} OR EXISTS (SELECT 1 FROM tracker_trace_metadata u
     WHERE u.trace_id = t.trace_id AND u.key = 'mlflow.trace.user' AND u.value = ${params.add(scope.user)}))`;

export type SearchTracesRequest = {
  experimentIds: number[];
  filter?: string | undefined;
  maxResults: number;
  orderBy: string[];
  pageToken?: string | undefined;
  /** Only this user's traces in this experiment (the platform's, for a caller who may not list them all). */
  scope?: TraceScope | undefined;
};

export async function searchTraces(db: Sql, req: SearchTracesRequest): Promise<{ traceIds: string[]; nextPageToken?: string }> {
  const maxResults = checkMaxResults(req.maxResults, MAX_TRACES_PAGE);
  const offset = startOffset(req.pageToken);
  if (req.experimentIds.length === 0) return { traceIds: [] };
  const params = new Params();
  const where = [
    `t.experiment_id = ANY(${params.add(req.experimentIds)}::bigint[])`,
    experimentInWorkspace('t.experiment_id', params.add(requestWorkspace())),
    ...filterConditions(parseFilter(req.filter).map((c) => condition(c, params))),
    ...(req.scope ? [scopeCondition(req.scope, params)] : []),
  ];
  const keys: string[] = [];
  const terms = orderEntries(req.orderBy).flatMap((clause) => {
    const { identifier, ascending } = parseOrderBy(clause);
    if (keyedTable(identifier.entity))
      throw invalidParameter(`Invalid order_by clause '${clause}': traces are ordered by attributes only.`);
    const { column } = attributeOf(identifier.key);
    keys.push(column);
    return [`${column} ${ascending ? 'ASC' : 'DESC'} NULLS LAST`];
  });
  checkDistinct(keys, req.orderBy);
  if (!keys.includes('t.request_time')) terms.push('t.request_time DESC');
  terms.push('t.trace_id ASC');
  const rows = await db.query<{ trace_id: string }>(
    `SELECT t.trace_id FROM tracker_traces t WHERE ${where.join(' AND ')}
     ORDER BY ${terms.join(', ')} LIMIT ${params.add(maxResults + 1)} OFFSET ${params.add(offset)}`,
    params.values,
    SEARCH_STATEMENT,
  );
  const result = page(rows, offset, maxResults);
  return { traceIds: result.rows.map((r) => r.trace_id), ...(result.nextPageToken ? { nextPageToken: result.nextPageToken } : {}) };
}
