import type { Sql } from '../../platform/db/types.ts';
import { invalidParameter } from '../errors.ts';
import { parseFilter, type Comparison } from '../search/filter.ts';
import { checkMaxResults, decodePageToken, encodePageToken, MAX_RESULTS, page, readOffset } from '../search/paging.ts';
import {
  attributeNamed,
  checkOp,
  compare,
  compareMetric,
  experimentIdsOf,
  NUMERIC_OPS,
  Params,
  SEARCH_STATEMENT,
  STRING_OPS,
  filterConditions,
  type ChildRows,
  type RowTest,
} from '../search/sql.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import { lookupTable } from '../../platform/lookup-table.ts';

// search_logged_models (MLflow 3): entities are written `attributes.`, `metrics.`, `params.`, `tags.` (or a bare
// attribute name); a model's metric value is its latest point for the key (greatest timestamp, then step). Order
// entries are objects ({field_name, ascending, dataset_name, dataset_digest}); missing values sort last. The page
// token carries the request it was made for and is refused with another one, as MLflow does.

export type LoggedModelOrder = { field_name: string; ascending?: boolean; dataset_name?: string; dataset_digest?: string };

/** The client's `datasets` argument: metrics count only when logged on one of these datasets. */
export type LoggedModelDataset = { dataset_name: string; dataset_digest?: string };

export type SearchLoggedModelsRequest = {
  experimentIds: string[];
  filter?: string;
  datasets?: LoggedModelDataset[];
  orderBy?: LoggedModelOrder[];
  maxResults: number;
  pageToken?: string;
};

const ATTRIBUTES: Record<string, { column: string; numeric: boolean }> = lookupTable({
  name: { column: 'lm.name', numeric: false },
  model_id: { column: 'lm.model_id', numeric: false },
  model_type: { column: 'lm.model_type', numeric: false },
  status: { column: 'lm.status', numeric: false },
  source_run_id: { column: 'lm.source_run_id', numeric: false },
  creation_timestamp: { column: 'lm.creation_time', numeric: true },
  creation_time: { column: 'lm.creation_time', numeric: true },
  last_updated_timestamp: { column: 'lm.last_updated_time', numeric: true },
  last_updated_time: { column: 'lm.last_updated_time', numeric: true },
});
const ENTITIES = ['attributes', 'metrics', 'params', 'tags'];

const attributeOf = (key: string) => attributeNamed(ATTRIBUTES, key);

/** `(dataset_name = .. AND dataset_digest = ..) OR ...` over metric rows, or undefined for no dataset scope. */
function onDatasets(datasets: LoggedModelDataset[], params: Params, alias = ''): string | undefined {
  if (datasets.length === 0) return undefined;
  const one = (d: LoggedModelDataset) =>
    d.dataset_digest
      ? `(${alias}dataset_name = ${params.add(d.dataset_name)} AND ${alias}dataset_digest = ${params.add(d.dataset_digest)})`
      : `${alias}dataset_name = ${params.add(d.dataset_name)}`;
  return `(${datasets.map(one).join(' OR ')})`;
}

/** The latest metric point per model for one key (optionally on some datasets), as a derived table. */
function latestMetrics(key: string, params: Params, datasets: LoggedModelDataset[]): string {
  const scope = [`key = ${params.add(key)}`, onDatasets(datasets, params)].filter(Boolean);
  return `(SELECT DISTINCT ON (model_id) model_id, value, is_nan FROM tracker_logged_model_metrics
    WHERE ${scope.join(' AND ')} ORDER BY model_id, timestamp DESC, step DESC, value DESC)`;
}

const PARAMS: ChildRows = { from: 'tracker_logged_model_params x', on: 'x.model_id = lm.model_id', key: 'x.key' };
const TAGS: ChildRows = { from: 'tracker_logged_model_tags x', on: 'x.model_id = lm.model_id', key: 'x.key' };

/** The model's latest point per metric key (on the request's datasets, if any), the rows its metric tests read. */
function latestMetricRows(params: Params, datasets: LoggedModelDataset[]): ChildRows {
  const scope = onDatasets(datasets, params, 'x.');
  return {
    from: `(SELECT DISTINCT ON (x.key) x.key, x.value, x.is_nan FROM tracker_logged_model_metrics x
      WHERE x.model_id = lm.model_id${scope ? ` AND ${scope}` : ''} ORDER BY x.key, x.timestamp DESC, x.step DESC, x.value DESC) l`,
    on: 'true',
    key: 'l.key',
  };
}

function condition(c: Comparison, params: Params, metricRows: () => ChildRows): string | RowTest {
  const { entity, key, text } = c.identifier;
  if (entity !== undefined && !ENTITIES.includes(entity)) {
    throw invalidParameter(`Invalid entity type: '${entity}'. Expected one of ['attributes', 'metrics', 'params', 'tags'].`);
  }
  const numeric = entity === 'metrics' || ((entity === undefined || entity === 'attributes') && attributeOf(key).numeric);
  checkOp(c, numeric ? NUMERIC_OPS : STRING_OPS, text);
  if (c.value.kind === 'list' || c.value.kind === 'bare') {
    throw invalidParameter(`Invalid value ${c.value.text} for ${text}: expected ${numeric ? 'a number' : 'a quoted string'}.`);
  }
  if (numeric && c.value.kind !== 'number') throw invalidParameter(`Expected numeric value type for ${text}. Found ${c.value.text}`);
  const value = c.value.kind === 'number' ? c.value.value : c.value.value;
  switch (entity) {
    case 'metrics': {
      const k = params.add(key);
      return {
        rows: metricRows(),
        key: k,
        test: `l.key = ${k} AND ${compareMetric('l.value', 'l.is_nan', c.op, value as number, params)}`,
      };
    }
    case 'params':
    case 'tags': {
      const k = params.add(key);
      return {
        rows: entity === 'params' ? PARAMS : TAGS,
        key: k,
        test: `x.key = ${k} AND ${compare('x.value', c.op, String(value), params)}`,
      };
    }
    default:
      return compare(attributeOf(key).column, c.op, numeric ? (value as number) : String(value), params);
  }
}

function ordering(orderBy: LoggedModelOrder[], params: Params): { joins: string[]; terms: string[] } {
  const joins: string[] = [];
  const terms: string[] = [];
  let byCreation = false;
  let byId = false;
  orderBy.forEach((ob, n) => {
    if (typeof ob !== 'object' || ob === null) throw invalidParameter('`order_by` must be a list of dictionaries.');
    const field = typeof ob.field_name === 'string' ? ob.field_name.trim() : undefined;
    if (!field) throw invalidParameter('`field_name` in the `order_by` clause must be specified.');
    if (ob.ascending !== undefined && typeof ob.ascending !== 'boolean') {
      throw invalidParameter(
        `Value of \`ascending\` in the \`order_by\` clause must be a boolean, got ${typeof ob.ascending} for field ${field}.`,
      );
    }
    if (ob.dataset_digest && !ob.dataset_name) {
      throw invalidParameter('`dataset_digest` can only be specified if `dataset_name` is also specified.');
    }
    const direction = ob.ascending === false ? 'DESC' : 'ASC';
    const dot = field.indexOf('.');
    if (dot < 0) {
      const attribute = ATTRIBUTES[field];
      if (!attribute) throw invalidParameter(`Invalid order by field name: ${field}.`);
      byCreation ||= attribute.column === 'lm.creation_time';
      byId ||= attribute.column === 'lm.model_id';
      terms.push(`(${attribute.column} IS NULL)`, `${attribute.column} ${direction}`);
      return;
    }
    const entity = field.slice(0, dot);
    if (entity !== 'metrics') throw invalidParameter(`Invalid order by field name: ${entity}, only \`metrics.<name>\` is allowed.`);
    const key = field.slice(dot + 1).replace(/^`(.*)`$/, '$1');
    const alias = `o${n + 1}`;
    const datasets = ob.dataset_name
      ? [{ dataset_name: ob.dataset_name, ...(ob.dataset_digest ? { dataset_digest: ob.dataset_digest } : {}) }]
      : [];
    joins.push(`LEFT JOIN ${latestMetrics(key, params, datasets)} ${alias} ON ${alias}.model_id = lm.model_id`);
    terms.push(`(CASE WHEN ${alias}.model_id IS NULL THEN 2 WHEN ${alias}.is_nan THEN 1 ELSE 0 END)`, `${alias}.value ${direction}`);
  });
  if (!byCreation) terms.push('lm.creation_time DESC');
  if (!byId) terms.push('lm.model_id ASC');
  return { joins, terms };
}

/** The offset of a token made for this very request (same experiments, filter and order). */
function tokenOffset(req: SearchLoggedModelsRequest): number {
  if (!req.pageToken) return 0;
  const token = decodePageToken(req.pageToken);
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  if (!same(token.experiment_ids, req.experimentIds)) {
    throw invalidParameter(
      `Experiment IDs in the page token do not match the requested experiment IDs. Expected: ${JSON.stringify(req.experimentIds)}. Found: ${JSON.stringify(token.experiment_ids)}`,
    );
  }
  if (!same(token.filter_string, req.filter || null)) {
    throw invalidParameter(
      `Filter string in the page token does not match the requested filter string. Expected: ${req.filter ?? null}. Found: ${token.filter_string}`,
    );
  }
  if (!same(token.order_by, req.orderBy?.length ? req.orderBy : null)) {
    throw invalidParameter(
      `Order by in the page token does not match the requested order by. Expected: ${JSON.stringify(req.orderBy ?? null)}. Found: ${JSON.stringify(token.order_by)}`,
    );
  }
  return readOffset({ offset: token.offset ?? 0 });
}

export async function searchLoggedModels(db: Sql, req: SearchLoggedModelsRequest): Promise<{ modelIds: string[]; nextPageToken?: string }> {
  const maxResults = checkMaxResults(req.maxResults, MAX_RESULTS.loggedModels);
  const offset = tokenOffset(req);
  const experimentIds = experimentIdsOf(req.experimentIds);
  const params = new Params();
  const { joins, terms } = ordering(req.orderBy ?? [], params);
  const datasets = req.datasets ?? [];
  if (datasets.some((d) => !d?.dataset_name)) throw invalidParameter('`dataset_name` in the `datasets` clause must be specified.');
  const comparisons = parseFilter(req.filter);
  let metrics: ChildRows | undefined;
  const metricRows = () => (metrics ??= latestMetricRows(params, datasets));
  const where = [
    `lm.experiment_id = ANY(${params.add(experimentIds)}::bigint[])`,
    experimentInWorkspace('lm.experiment_id', params.add(requestWorkspace())),
    `lm.lifecycle_stage = 'active'`,
    ...filterConditions(comparisons.map((c) => condition(c, params, metricRows))),
  ];
  // Datasets without a metric condition keep the models with any metric on those datasets, as MLflow does.
  if (datasets.length > 0 && !comparisons.some((c) => c.identifier.entity === 'metrics')) {
    where.push(
      `EXISTS (SELECT 1 FROM tracker_logged_model_metrics x WHERE x.model_id = lm.model_id AND ${onDatasets(datasets, params, 'x.')})`,
    );
  }
  if (experimentIds.length === 0) return { modelIds: [] };
  const sql = `SELECT lm.model_id FROM tracker_logged_models lm ${joins.join(' ')}
    WHERE ${where.join(' AND ')}
    ORDER BY ${terms.join(', ')}
    LIMIT ${params.add(maxResults + 1)} OFFSET ${params.add(offset)}`;
  const rows = await db.query<{ model_id: string }>(sql, params.values, SEARCH_STATEMENT);
  const result = page(rows, offset, maxResults, (next) =>
    encodePageToken({
      experiment_ids: req.experimentIds,
      filter_string: req.filter || null,
      order_by: req.orderBy?.length ? req.orderBy : null,
      offset: next,
    }),
  );
  return { modelIds: result.rows.map((r) => r.model_id), ...(result.nextPageToken ? { nextPageToken: result.nextPageToken } : {}) };
}
