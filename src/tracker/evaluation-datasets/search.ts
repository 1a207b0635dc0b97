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
import { requestWorkspace, workspaceIs } from '../workspaces/sql.ts';
import { lookupTable } from '../../platform/lookup-table.ts';

// search_datasets (evaluation datasets): by experiment, `name`, `dataset_id`, `created_time`, `last_update_time`
// and `tags.<key>`; ordered by those attributes, newest first by default.

const ATTRIBUTES: Record<string, { column: string; numeric: boolean }> = lookupTable({
  name: { column: 'd.name', numeric: false },
  dataset_id: { column: 'd.dataset_id', numeric: false },
  digest: { column: 'd.digest', numeric: false },
  created_time: { column: 'd.created_time', numeric: true },
  last_update_time: { column: 'd.last_update_time', numeric: true },
});

const attributeOf = (key: string) => attributeNamed(ATTRIBUTES, key);

const TAGS: ChildRows = { from: 'tracker_evaluation_dataset_tags t', on: 't.dataset_id = d.dataset_id', key: 't.key' };

function condition(c: Comparison, params: Params): string | RowTest {
  const { entity, key } = c.identifier;
  if (entity === 'tags' || entity === 'tag') {
    checkOp(c, STRING_OPS, `tag '${key}'`);
    const k = params.add(key);
    return { rows: TAGS, key: k, test: `t.key = ${k} AND ${compare('t.value', c.op, stringValue(c.value, 'tag'), params)}` };
  }
  if (entity !== undefined && entity !== 'attribute' && entity !== 'attributes') {
    throw invalidParameter(`Invalid entity type '${entity}'. Valid entity types are ('attribute', 'tags')`);
  }
  const attribute = attributeOf(key);
  if (attribute.numeric) return compareNumeric(attribute.column, key, c, params);
  checkOp(c, STRING_OPS, `attribute '${key}'`);
  return compare(attribute.column, c.op, stringValue(c.value, 'attributes'), params);
}

export type SearchEvaluationDatasetsRequest = {
  experimentIds: number[];
  filter?: string | undefined;
  maxResults: number;
  orderBy: string[];
  pageToken?: string | undefined;
};

export async function searchEvaluationDatasets(
  db: Sql,
  req: SearchEvaluationDatasetsRequest,
): Promise<{ ids: string[]; nextPageToken?: string }> {
  const maxResults = checkMaxResults(req.maxResults, 50_000);
  const offset = startOffset(req.pageToken);
  const params = new Params();
  const where = filterConditions(parseFilter(req.filter).map((c) => condition(c, params)));
  if (req.experimentIds.length) {
    where.push(
      `EXISTS (SELECT 1 FROM tracker_evaluation_dataset_experiments e WHERE e.dataset_id = d.dataset_id AND e.experiment_id = ANY(${params.add(req.experimentIds)}::bigint[]))`,
    );
  }
  const keys: string[] = [];
  const terms = orderEntries(req.orderBy).map((clause) => {
    const { identifier, ascending } = parseOrderBy(clause);
    const { column } = attributeOf(identifier.key);
    keys.push(column);
    return `${column} ${ascending ? 'ASC' : 'DESC'}`;
  });
  checkDistinct(keys, req.orderBy);
  if (!keys.includes('d.created_time')) terms.push('d.created_time DESC');
  terms.push('d.dataset_id ASC');
  const rows = await db.query<{ dataset_id: string }>(
    `SELECT d.dataset_id FROM tracker_evaluation_datasets d WHERE ${[workspaceIs('d.workspace', params.add(requestWorkspace())), ...where].join(' AND ')}
     ORDER BY ${terms.join(', ')} LIMIT ${params.add(maxResults + 1)} OFFSET ${params.add(offset)}`,
    params.values,
    SEARCH_STATEMENT,
  );
  const result = page(rows, offset, maxResults);
  return { ids: result.rows.map((r) => r.dataset_id), ...(result.nextPageToken ? { nextPageToken: result.nextPageToken } : {}) };
}
