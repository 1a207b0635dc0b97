import type { Sql } from '../../platform/db/index.ts';
import { invalidParameter } from '../errors.ts';
import type { ViewType } from '../wire/fields.ts';
import { parseFilter, parseOrderBy, type Comparison, type Identifier } from '../search/filter.ts';
import { checkMaxResults, MAX_RESULTS, page, startOffset } from '../search/paging.ts';
import {
  attributeNamed,
  checkDistinct,
  checkOp,
  compare,
  compareMetric,
  compareNumeric,
  experimentIdsOf,
  LIST_OPS,
  numberValue,
  NUMERIC_OPS,
  orderEntries,
  filterConditions,
  Params,
  type ChildRows,
  type RowTest,
  SEARCH_STATEMENT,
  STRING_OPS,
  stringValue,
} from '../search/sql.ts';
import { requestWorkspace, workspaceIs } from '../workspaces/sql.ts';
import { lookupTable } from '../../platform/lookup-table.ts';

// search_runs: the filter's tests on the run's latest metrics, params, tags and dataset inputs become one condition
// per table (an EXISTS for one test, one scan of the run's rows for several: filterConditions); each order_by key becomes one LEFT JOIN; one statement returns a page (and one row more, to know if another
// page exists), or two when the first key is a metric and its runs with a value fall short of the page (search-page.ts). Rows missing an order key sort last in both directions, NaN metrics just before them. When the first
// key is a metric, the statement reads the runs in its index's order (byLeadingMetric).

export type SearchRunsRequest = {
  experimentIds: string[];
  filter?: string;
  runViewType?: ViewType;
  maxResults: number;
  orderBy?: string[];
  pageToken?: string;
};

type Entity = 'metric' | 'parameter' | 'tag' | 'attribute' | 'dataset';

const ENTITIES: Record<string, Entity> = lookupTable({
  metric: 'metric',
  metrics: 'metric',
  parameter: 'parameter',
  parameters: 'parameter',
  param: 'parameter',
  params: 'parameter',
  tag: 'tag',
  tags: 'tag',
  attribute: 'attribute',
  attributes: 'attribute',
  attr: 'attribute',
  run: 'attribute',
  dataset: 'dataset',
  datasets: 'dataset',
});

// Attribute names (and MLflow's aliases) to their column; numeric ones compare as numbers.
const ATTRIBUTES: Record<string, { column: string; numeric: boolean; canonical: string }> = lookupTable({
  run_id: { column: 'r.run_id', numeric: false, canonical: 'run_id' },
  run_name: { column: 'r.name', numeric: false, canonical: 'run_name' },
  'run name': { column: 'r.name', numeric: false, canonical: 'run_name' },
  'Run name': { column: 'r.name', numeric: false, canonical: 'run_name' },
  'Run Name': { column: 'r.name', numeric: false, canonical: 'run_name' },
  status: { column: 'r.status', numeric: false, canonical: 'status' },
  user_id: { column: 'r.user_id', numeric: false, canonical: 'user_id' },
  artifact_uri: { column: 'r.artifact_uri', numeric: false, canonical: 'artifact_uri' },
  lifecycle_stage: { column: 'r.lifecycle_stage', numeric: false, canonical: 'lifecycle_stage' },
  start_time: { column: 'r.start_time', numeric: true, canonical: 'start_time' },
  created: { column: 'r.start_time', numeric: true, canonical: 'start_time' },
  Created: { column: 'r.start_time', numeric: true, canonical: 'start_time' },
  end_time: { column: 'r.end_time', numeric: true, canonical: 'end_time' },
});

const DATASET_KEYS = ['name', 'digest', 'context'];
const DATASET_CONTEXT_TAG = 'mlflow.data.context';

function entityOf(identifier: Identifier): Entity {
  if (identifier.entity === undefined) return 'attribute';
  const entity = ENTITIES[identifier.entity];
  if (!entity) {
    throw invalidParameter(
      `Invalid entity type '${identifier.entity}'. Valid values are ['metric', 'parameter', 'tag', 'attribute', 'dataset']`,
    );
  }
  return entity;
}

const attributeOf = (key: string) => attributeNamed(ATTRIBUTES, key);

// The tables of a run's own rows a filter tests; the dataset inputs carry their context as an input tag.
const METRICS: ChildRows = { from: 'tracker_latest_metrics m', on: 'm.run_id = r.run_id', key: 'm.key' };
const PARAMS: ChildRows = { from: 'tracker_params x', on: 'x.run_id = r.run_id', key: 'x.key' };
const TAGS: ChildRows = { from: 'tracker_tags x', on: 'x.run_id = r.run_id', key: 'x.key' };
const DATASETS: ChildRows = {
  from: `tracker_inputs i JOIN tracker_datasets d ON d.dataset_id = i.source_id
      LEFT JOIN tracker_input_tags t ON t.input_id = i.input_id AND t.name = '${DATASET_CONTEXT_TAG}'`,
  on: `i.destination_id = r.run_id AND i.destination_type = 'RUN_INPUT' AND i.source_type = 'DATASET'`,
};

/** The SQL of one comparison on run `r`: a condition on its columns, or a test on one of its rows. */
function condition(c: Comparison, params: Params): string | RowTest {
  const { key } = c.identifier;
  const entity = entityOf(c.identifier);
  switch (entity) {
    case 'metric': {
      checkOp(c, NUMERIC_OPS, `metric '${key}'`);
      const value = numberValue(c.value, 'metric');
      const k = params.add(key);
      return { rows: METRICS, key: k, test: `m.key = ${k} AND ${compareMetric('m.value', 'm.is_nan', c.op, value, params)}` };
    }
    case 'parameter':
    case 'tag': {
      checkOp(c, STRING_OPS, `${entity} '${key}'`);
      const value = stringValue(c.value, entity);
      const k = params.add(key);
      return { rows: entity === 'tag' ? TAGS : PARAMS, key: k, test: `x.key = ${k} AND ${compare('x.value', c.op, value, params)}` };
    }
    case 'attribute': {
      const attribute = attributeOf(key);
      if (attribute.numeric) return compareNumeric(attribute.column, key, c, params);
      if (c.value.kind === 'list') {
        if (attribute.canonical !== 'run_id') {
          throw invalidParameter("Only the 'run_id' attribute supports comparison with a list of quoted string values.");
        }
        checkOp(c, LIST_OPS, `a list of run ids`);
        return compare(attribute.column, c.op, c.value.values, params);
      }
      if (c.value.kind === 'number') throw invalidParameter(`Expected a quoted string value for attributes. Got value ${c.value.text}`);
      const value = stringValue(c.value, 'attributes');
      checkOp(c, STRING_OPS, `attribute '${key}'`);
      return compare(attribute.column, c.op, value, params);
    }
    case 'dataset': {
      if (!DATASET_KEYS.includes(key)) {
        throw invalidParameter(`Invalid dataset key '${key}' specified. Valid keys are '${DATASET_KEYS.join("', '")}'`);
      }
      const value = c.value.kind === 'list' ? c.value.values : stringValue(c.value, 'dataset attributes');
      checkOp(c, Array.isArray(value) ? LIST_OPS : STRING_OPS, `dataset '${key}'`);
      // An input without a context tag has a NULL t.value, which matches no comparison, as the inner join did.
      return { rows: DATASETS, test: compare(key === 'context' ? 't.value' : `d.${key}`, c.op, value, params) };
    }
  }
}

type Term = { expr: string; direction: 'ASC' | 'DESC' };
/** When the first order key is a metric: its key's parameter, its direction and the alias of its join. */
type LeadingMetric = { name: string; key: string; direction: 'ASC' | 'DESC'; alias: string };

/** ORDER BY terms and the LEFT JOINs they need, one join per key. */
function ordering(orderBy: string[], params: Params): { joins: string[]; terms: Term[]; leading?: LeadingMetric } {
  const joins: string[] = [];
  const terms: Term[] = [];
  const keys: string[] = [];
  let leading: LeadingMetric | undefined;
  orderBy.forEach((clause, n) => {
    const { identifier, ascending } = parseOrderBy(clause);
    const direction = ascending ? 'ASC' : 'DESC';
    const alias = `o${n + 1}`;
    const entity = entityOf(identifier);
    switch (entity) {
      case 'attribute': {
        const attribute = attributeOf(identifier.key);
        keys.push(`attribute:${attribute.canonical}`);
        terms.push({ expr: `(${attribute.column} IS NULL)`, direction: 'ASC' }, { expr: attribute.column, direction });
        break;
      }
      case 'metric': {
        keys.push(`metric:${identifier.key}`);
        const key = params.add(identifier.key);
        if (n === 0) leading = { name: identifier.key, key, direction, alias };
        joins.push(`LEFT JOIN tracker_latest_metrics ${alias} ON ${alias}.run_id = r.run_id AND ${alias}.key = ${key}`);
        // Present values first, then NaN, then runs without the metric, whatever the direction.
        terms.push(
          { expr: `(CASE WHEN ${alias}.run_id IS NULL THEN 2 WHEN ${alias}.is_nan THEN 1 ELSE 0 END)`, direction: 'ASC' },
          { expr: `${alias}.value`, direction },
        );
        break;
      }
      case 'parameter':
      case 'tag': {
        keys.push(`${entity}:${identifier.key}`);
        const table = entity === 'tag' ? 'tracker_tags' : 'tracker_params';
        joins.push(`LEFT JOIN ${table} ${alias} ON ${alias}.run_id = r.run_id AND ${alias}.key = ${params.add(identifier.key)}`);
        terms.push({ expr: `(${alias}.value IS NULL)`, direction: 'ASC' }, { expr: `${alias}.value`, direction });
        break;
      }
      case 'dataset':
        throw invalidParameter(`Invalid order_by clause '${clause}': runs cannot be ordered by dataset fields.`);
    }
  });
  checkDistinct(keys, orderBy);
  if (!keys.includes('attribute:start_time')) terms.push({ expr: 'r.start_time', direction: 'DESC' });
  terms.push({ expr: 'r.run_id', direction: 'ASC' });
  return { joins, terms, ...(leading ? { leading } : {}) };
}

const orderList = (terms: Term[]) => terms.map((t) => `${t.expr} ${t.direction}`).join(', ');

/**
 * The page's statement when the first order key is a metric. The runs with a value are read in the order of the
 * index on (key, value) and the read stops once the window (the pages up to this one, and one row) is full; only a
 * window left short goes on to the runs whose value is NaN (a partial index), then to the runs without the metric
 * (which means looking at every run). Each part numbers its rows in its own order, so the whole is ordered by (part,
 * number) alone. At 10 000 runs a first page takes about 1 ms where sorting every run took 7 to 20; the last pages
 * cost about twice that sort (the window is read whole, then numbered).
 * The filter's comparisons on that same metric (`tests`) are conditions on its join: in the index's range for the
 * runs with a value; a NaN matches only `!=` and a run without the metric matches none, so those parts are left out
 * of the statement when a test rules them out (less to plan, and no scan of every run for a page left short).
 */
function byLeadingMetric(sel: LeadingSelection, window: string): string {
  const { key } = sel.leading;
  const rest = sel.terms.slice(2);
  const part = (from: string, where: string[], order: Term[]) =>
    `SELECT r.run_id, row_number() OVER (ORDER BY ${orderList(order)}) AS n_ ${from} ${sel.others}
     WHERE ${[...sel.where, ...where].join(' AND ')} ORDER BY ${orderList(order)} LIMIT ${window}`;
  // Each part after the first is read only while the parts before it left the window short.
  const parts: { name: string; sql: string }[] = [];
  const short = () => (parts.length ? [`${parts.map((p) => `(SELECT count(*) FROM ${p.name})`).join(' + ')} < ${window}`] : []);
  const add = (name: string, sql: string) => parts.push({ name, sql });
  add('present', part(withMetric(sel, false), onValues(sel), presentOrder(sel)));
  if (nanPossible(sel.tests)) add('nan', part(withMetric(sel, true), short(), rest));
  if (missingPossible(sel.tests)) {
    const without = `NOT EXISTS (SELECT 1 FROM tracker_latest_metrics m WHERE m.run_id = r.run_id AND m.key = ${key})`;
    add('missing', part('FROM tracker_runs r', [without, ...short()], rest));
  }
  return `WITH ${parts.map((p) => `${p.name} AS MATERIALIZED (${p.sql})`).join(', ')}
    SELECT run_id FROM (${parts.map((p, n) => `SELECT ${n} AS part_, * FROM ${p.name}`).join(' UNION ALL ')}) s
    ORDER BY part_, n_`;
}

/**
 * The page read from the runs with a value of the leading metric alone, with each run's stored JSON: what a search
 * sends first (presentFirst). It plans and runs in a third of the whole statement's time, which plans the NaN and
 * missing parts (and their copies of the filter) even when the window is full before them.
 */
function presentPage(sel: LeadingSelection, limit: string, offset: string): string {
  return `SELECT r.run_id, r.run_json ${withMetric(sel, false)} ${sel.others}
    WHERE ${[...sel.where, ...onValues(sel)].join(' AND ')} ORDER BY ${orderList(presentOrder(sel))} LIMIT ${limit} OFFSET ${offset}`;
}

type LeadingSelection = { others: string; where: string[]; terms: Term[]; leading: LeadingMetric; tests: LeadingTest[] };

// Inside a part the leading metric's rank is constant and its join an inner one (or none).
const withMetric = (sel: LeadingSelection, nan: boolean) => {
  const { alias, key } = sel.leading;
  return `FROM tracker_runs r JOIN tracker_latest_metrics ${alias} ON ${alias}.run_id = r.run_id AND ${alias}.key = ${key} AND ${alias}.is_nan = ${nan}`;
};
const onValues = (sel: LeadingSelection) => sel.tests.map((t) => t.onValue);
const presentOrder = (sel: LeadingSelection): Term[] => [
  { expr: `${sel.leading.alias}.value`, direction: sel.leading.direction },
  ...sel.terms.slice(2),
];
// A NaN matches only `!=`; a run without the metric matches no comparison on it.
const nanPossible = (tests: LeadingTest[]) => tests.every((t) => t.op === '!=');
const missingPossible = (tests: LeadingTest[]) => tests.length === 0;

/** A filter's comparison on the leading order metric, as a condition on a run's value of it (not NaN). */
type LeadingTest = { op: string; onValue: string };

/**
 * The filter's comparisons, in order: those on the leading metric as tests of its join, the others as conditions
 * (so the first refusal is still the first bad comparison's).
 */
function filterOf(comparisons: Comparison[], leading: LeadingMetric | undefined, params: Params) {
  const tests: LeadingTest[] = [];
  const conditions: (string | RowTest)[] = [];
  for (const c of comparisons) {
    if (leading && entityOf(c.identifier) === 'metric' && c.identifier.key === leading.name) {
      checkOp(c, NUMERIC_OPS, `metric '${c.identifier.key}'`);
      tests.push({ op: c.op, onValue: compare(`${leading.alias}.value`, c.op, numberValue(c.value, 'metric'), params) });
    } else {
      conditions.push(condition(c, params));
    }
  }
  return { tests, conditions: filterConditions(conditions) };
}

/**
 * The run is in one of the searched experiments that are in the request's workspace. The experiments are found once,
 * in a subquery that does not depend on the run (an InitPlan), rather than by a join each part of the statement
 * plans again: on 10 000 runs that took a third off planning a search ordered by a metric (1.9 to 1.4 ms of
 * Postgres CPU a statement; with a filter on a metric and a param, 8.8 to 6.5 ms).
 */
function searchedExperiments(ids: string, workspace: string): string {
  return `r.experiment_id = ANY((SELECT array_agg(e.experiment_id) FROM tracker_experiments e
    WHERE e.experiment_id = ANY(${ids}::bigint[]) AND ${workspaceIs('e.workspace', workspace)})::bigint[])`;
}

const STAGES: Record<ViewType, string[]> = { ACTIVE_ONLY: ['active'], DELETED_ONLY: ['deleted'], ALL: ['active', 'deleted'] };

export type RunSearch = {
  sql: string;
  params: unknown[];
  offset: number;
  maxResults: number;
  /**
   * When the first order key is a metric: the page from its runs with a value alone, with their stored JSON
   * (presentPage), and whether those runs are all the search can find (the filter rules out NaN and missing values).
   */
  presentFirst?: { sql: string; params: unknown[]; whole: boolean };
};

/** The statement of a page of run ids in the search's order (and one row more); undefined when no experiment is searched. */
export function runSearch(req: SearchRunsRequest): RunSearch | undefined {
  const maxResults = checkMaxResults(req.maxResults, MAX_RESULTS.runs);
  const offset = startOffset(req.pageToken);
  const experimentIds = experimentIdsOf(req.experimentIds);
  const stages = STAGES[req.runViewType ?? 'ACTIVE_ONLY'];
  if (!stages) throw invalidParameter(`Invalid run_view_type '${req.runViewType}'.`);
  // Built once for each statement: a statement must use every parameter it is sent.
  const selection = () => {
    const params = new Params();
    const { joins, terms, leading } = ordering(orderEntries(req.orderBy), params);
    const where = [
      searchedExperiments(params.add(experimentIds), params.add(requestWorkspace())),
      `r.lifecycle_stage = ANY(${params.add(stages)}::text[])`,
    ];
    const { tests, conditions } = filterOf(parseFilter(req.filter), leading, params);
    where.push(...conditions);
    return { params, joins, terms, where, leading: leading ? { leading, tests, others: joins.slice(1).join(' ') } : undefined };
  };
  const { params, joins, terms, where, leading } = selection();
  if (experimentIds.length === 0) return undefined;
  const page = `LIMIT ${params.add(maxResults + 1)} OFFSET ${params.add(offset)}`;
  if (!leading) {
    const sql = `SELECT r.run_id FROM tracker_runs r ${joins.join(' ')} WHERE ${where.join(' AND ')} ORDER BY ${orderList(terms)} ${page}`;
    return { sql, params: params.values, offset, maxResults };
  }
  const sel = { ...leading, where, terms };
  const sql = `${byLeadingMetric(sel, `${params.add(offset + maxResults + 1)}::bigint`)} ${page}`;
  const first = selection();
  const firstSel = { ...first.leading!, where: first.where, terms: first.terms };
  const firstSql = presentPage(firstSel, first.params.add(maxResults + 1), first.params.add(offset));
  const whole = !nanPossible(sel.tests) && !missingPossible(sel.tests);
  return { sql, params: params.values, offset, maxResults, presentFirst: { sql: firstSql, params: first.params.values, whole } };
}

export async function searchRuns(db: Sql, req: SearchRunsRequest): Promise<{ runIds: string[]; nextPageToken?: string }> {
  const search = runSearch(req);
  if (!search) return { runIds: [] };
  const rows = await db.query<{ run_id: string }>(search.sql, search.params, SEARCH_STATEMENT);
  const result = page(rows, search.offset, search.maxResults);
  return { runIds: result.rows.map((r) => r.run_id), ...(result.nextPageToken ? { nextPageToken: result.nextPageToken } : {}) };
}
