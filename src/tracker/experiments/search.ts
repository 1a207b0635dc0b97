import type { Sql } from '../../platform/db/types.ts';
import { invalidParameter } from '../errors.ts';
import { parseFilter, parseOrderBy, type Comparison, type Identifier } from '../search/filter.ts';
import { checkMaxResults, MAX_RESULTS, page, startOffset } from '../search/paging.ts';
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
import type { ViewType } from '../wire/fields.ts';
import { requestWorkspace, workspaceIs } from '../workspaces/sql.ts';
import { lookupTable } from '../../platform/lookup-table.ts';

// search_experiments: attributes name, creation_time, last_update_time and tags.<key>; ordered by name,
// experiment_id, creation_time or last_update_time (default creation_time DESC, experiment_id ASC), with
// experiment_id DESC as the tie-breaker when the caller's order does not name it.

export type SearchExperimentsRequest = {
  filter?: string;
  viewType?: ViewType;
  maxResults: number;
  orderBy?: string[];
  pageToken?: string;
};

const FILTER_ATTRIBUTES: Record<string, { column: string; numeric: boolean }> = lookupTable({
  name: { column: 'e.name', numeric: false },
  creation_time: { column: 'e.creation_time', numeric: true },
  last_update_time: { column: 'e.last_update_time', numeric: true },
});
const ORDER_ATTRIBUTES: Record<string, string> = lookupTable({
  name: 'e.name',
  experiment_id: 'e.experiment_id',
  creation_time: 'e.creation_time',
  last_update_time: 'e.last_update_time',
});

function entityOf(identifier: Identifier): 'attribute' | 'tag' {
  if (identifier.entity === undefined || identifier.entity === 'attribute') return 'attribute';
  if (identifier.entity === 'tag' || identifier.entity === 'tags') return 'tag';
  throw invalidParameter(`Invalid entity type '${identifier.entity}'. Valid entity types are ('attribute', 'tag', 'tags')`);
}

const TAGS: ChildRows = { from: 'tracker_experiment_tags t', on: 't.experiment_id = e.experiment_id', key: 't.key' };

function condition(c: Comparison, params: Params): string | RowTest {
  const { key } = c.identifier;
  if (entityOf(c.identifier) === 'tag') {
    checkOp(c, STRING_OPS, `tag '${key}'`);
    const value = stringValue(c.value, 'tag');
    const k = params.add(key);
    return { rows: TAGS, key: k, test: `t.key = ${k} AND ${compare('t.value', c.op, value, params)}` };
  }
  const attribute = attributeNamed(FILTER_ATTRIBUTES, key);
  if (attribute.numeric) return compareNumeric(attribute.column, key, c, params);
  if (c.value.kind === 'list')
    throw invalidParameter("Only the 'run_id' attribute supports comparison with a list of quoted string values.");
  if (c.value.kind === 'number') throw invalidParameter(`Expected a quoted string value for attributes. Got value ${c.value.text}`);
  const value = stringValue(c.value, 'attributes');
  checkOp(c, STRING_OPS, `string attribute '${key}'`);
  return compare(attribute.column, c.op, value, params);
}

function ordering(orderBy: string[]): string[] {
  const clauses = orderBy.length > 0 ? orderBy : ['creation_time DESC', 'experiment_id ASC'];
  const keys: string[] = [];
  const terms = clauses.map((clause) => {
    const { identifier, ascending } = parseOrderBy(clause);
    if (entityOf(identifier) !== 'attribute') throw invalidParameter(`Invalid order_by entity: tag`);
    const column = attributeNamed(ORDER_ATTRIBUTES, identifier.key);
    keys.push(identifier.key);
    return `${column} ${ascending ? 'ASC' : 'DESC'}`;
  });
  checkDistinct(keys, orderBy);
  if (!keys.includes('experiment_id')) terms.push('e.experiment_id DESC');
  return terms;
}

const STAGES: Record<ViewType, string[]> = { ACTIVE_ONLY: ['active'], DELETED_ONLY: ['deleted'], ALL: ['active', 'deleted'] };

export async function searchExperiments(
  db: Sql,
  req: SearchExperimentsRequest,
): Promise<{ experimentIds: string[]; nextPageToken?: string }> {
  const maxResults = checkMaxResults(req.maxResults, MAX_RESULTS.experiments);
  const offset = startOffset(req.pageToken);
  const stages = STAGES[req.viewType ?? 'ACTIVE_ONLY'];
  if (!stages) throw invalidParameter(`Invalid view_type '${req.viewType}'.`);
  const params = new Params();
  const where = [
    `e.lifecycle_stage = ANY(${params.add(stages)}::text[])`,
    workspaceIs('e.workspace', params.add(requestWorkspace())),
    ...filterConditions(parseFilter(req.filter).map((c) => condition(c, params))),
  ];
  const terms = ordering(orderEntries(req.orderBy));
  const sql = `SELECT e.experiment_id FROM tracker_experiments e
    WHERE ${where.join(' AND ')}
    ORDER BY ${terms.join(', ')}
    LIMIT ${params.add(maxResults + 1)} OFFSET ${params.add(offset)}`;
  const rows = await db.query<{ experiment_id: number | bigint }>(sql, params.values, SEARCH_STATEMENT);
  const result = page(rows, offset, maxResults);
  return {
    experimentIds: result.rows.map((r) => String(r.experiment_id)),
    ...(result.nextPageToken ? { nextPageToken: result.nextPageToken } : {}),
  };
}
