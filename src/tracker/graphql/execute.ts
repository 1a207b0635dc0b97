import { listRunArtifacts, ListArtifacts } from '../artifacts/run-routes.ts';
import type { TrackerDeps } from '../deps.ts';
import { TrackerError } from '../errors.ts';
import { searchDatasets } from '../experiments/datasets.ts';
import { getExperiment } from '../experiments/load.ts';
import { ExperimentRef, SearchDatasets } from '../experiments/messages.ts';
import { loadModelVersions } from '../registry/load.ts';
import { SearchRegistry } from '../registry/messages.ts';
import { searchModelVersions } from '../registry/search.ts';
import { getRun, loadRuns, type RunJson } from '../runs/load.ts';
import { MetricHistoryBulkInterval, RunRef, SearchRuns } from '../runs/messages.ts';
import { metricHistoryBulkInterval } from '../runs/metrics.ts';
import { searchRuns } from '../runs/search.ts';
import { experimentIdOf } from '../wire/rules.ts';
import { parseMessage } from '../wire/request.ts';
import type { Document, Field, GqlValue, Selection } from './parse.ts';

// MLflow's GraphQL API (what its web UI queries): the root fields of its schema, each answered by the same
// functions as the REST endpoint it mirrors, the answer projected on the selection with MLflow's GraphQL types
// (64-bit integers as strings, NaN as null, absent lists empty), and MLflow's limits on a query's shape.

const MAX_DEPTH = 10;
const MAX_SELECTIONS = 1000;
const MAX_ROOT_FIELDS = 10;
const MAX_ALIASES = 10;

/** Fields MLflow's schema types as LongString (int64 in the protos). */
const LONG = new Set([
  'timestamp',
  'step',
  'startTime',
  'endTime',
  'creationTime',
  'lastUpdateTime',
  'fileSize',
  'creationTimestamp',
  'lastUpdatedTimestamp',
]);
const BOOLEAN = new Set(['isDir']);
const LISTS = new Set([
  'metrics',
  'params',
  'tags',
  'runs',
  'files',
  'datasetSummaries',
  'modelVersions',
  'latestVersions',
  'aliases',
  'datasetInputs',
  'modelInputs',
  'modelOutputs',
  'experiments',
]);

export class QueryRefused extends Error {}

type Lazy = () => Promise<unknown>;
type Resolver = (input: Record<string, unknown>, args: Record<string, unknown>) => Promise<unknown>;

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function snakeKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(snakeKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [snake(k), snakeKeys(x)]));
  return v;
}

function resolvers(deps: TrackerDeps): Record<string, Resolver> {
  const { db } = deps;
  // A run as MLflow's GraphQL extension shows it: also its experiment and the versions registered from it.
  const withLinks = (run: RunJson) => ({
    ...run,
    experiment: (async () => getExperiment(db, experimentIdOf(run.info.experiment_id))) as Lazy,
    model_versions: (async () => {
      const found = await searchModelVersions(db, {
        filter: `run_id = '${run.info.run_id.replaceAll("'", "''")}'`,
        maxResults: 1000,
        orderBy: [],
      });
      return loadModelVersions(
        db,
        found.versions.map((v) => ({ name: v.name, version: Number(v.version) })),
      );
    }) as Lazy,
  });
  return {
    test: async (_input, args) => ({ output: args.inputString ?? '' }),
    testMutation: async (_input, args) => ({ output: args.inputString ?? '' }),
    mlflowGetExperiment: async (input) => ({ experiment: await getExperiment(db, parseMessage(ExperimentRef, input).experiment_id) }),
    mlflowGetRun: async (input) => ({ run: withLinks(await getRun(db, parseMessage(RunRef, input))) }),
    mlflowSearchRuns: async (input) => {
      const m = parseMessage(SearchRuns, input);
      const found = await searchRuns(db, {
        experimentIds: m.experiment_ids,
        maxResults: m.max_results,
        ...(m.filter ? { filter: m.filter } : {}),
        ...(m.run_view_type ? { runViewType: m.run_view_type } : {}),
        ...(m.order_by.length ? { orderBy: m.order_by } : {}),
        ...(m.page_token ? { pageToken: m.page_token } : {}),
      });
      return { runs: (await loadRuns(db, found.runIds)).map(withLinks), next_page_token: found.nextPageToken };
    },
    mlflowListArtifacts: async (input) => listRunArtifacts(deps, parseMessage(ListArtifacts, input)),
    mlflowGetMetricHistoryBulkInterval: async (input) => {
      const m = parseMessage(MetricHistoryBulkInterval, input);
      return metricHistoryBulkInterval(db, {
        runIds: m.run_ids,
        key: m.metric_key,
        maxResults: m.max_results,
        startStep: m.start_step,
        endStep: m.end_step,
      });
    },
    mlflowSearchDatasets: async (input) => {
      const m = parseMessage(SearchDatasets, input);
      return {
        dataset_summaries: await searchDatasets(
          db,
          m.experiment_ids.map((id) => experimentIdOf(id)),
        ),
      };
    },
    mlflowSearchModelVersions: async (input) => {
      const m = parseMessage(SearchRegistry, input);
      const page = await searchModelVersions(db, {
        filter: m.filter,
        maxResults: m.max_results ?? 10_000,
        orderBy: m.order_by,
        pageToken: m.page_token,
      });
      const model_versions = await loadModelVersions(
        db,
        page.versions.map((v) => ({ name: v.name, version: Number(v.version) })),
      );
      return { model_versions, next_page_token: page.nextPageToken };
    },
  };
}

/** The fields of a selection set with fragments spread in. */
function fieldsOf(selections: Selection[], doc: Document, seen: ReadonlySet<string> = new Set()): Field[] {
  return selections.flatMap((s) => {
    if (s.kind === 'field') return [s];
    if (s.kind === 'inline') return fieldsOf(s.selections, doc, seen);
    if (seen.has(s.name)) return [];
    return fieldsOf(doc.fragments.get(s.name) ?? [], doc, new Set([...seen, s.name]));
  });
}

/** MLflow's limits on a query's shape, checked before anything runs, in its words. */
export function checkShape(doc: Document): void {
  let roots = 0;
  let maxAliases = 0;
  let selections = 0;
  for (const op of doc.operations) {
    const stack: { selections: Selection[]; depth: number }[] = [{ selections: op.selections, depth: 1 }];
    while (stack.length) {
      const { selections: set, depth } = stack.pop()!;
      if (depth > MAX_DEPTH) throw new QueryRefused(`Query exceeds maximum depth of ${MAX_DEPTH}`);
      const fields = fieldsOf(set, doc);
      for (const f of fields) {
        if (depth === 1) roots++;
        if (f.selections.length) stack.push({ selections: f.selections, depth: depth + 1 });
        if (++selections > MAX_SELECTIONS) throw new QueryRefused(`Query exceeds maximum total selections of ${MAX_SELECTIONS}`);
      }
      maxAliases = Math.max(maxAliases, fields.filter((f) => f.alias).length);
    }
  }
  if (roots > MAX_ROOT_FIELDS)
    throw new QueryRefused(`GraphQL queries should have at most ${MAX_ROOT_FIELDS} root fields, got ${roots} root fields.`);
  if (maxAliases > MAX_ALIASES)
    throw new QueryRefused(`GraphQL queries should have at most ${MAX_ALIASES} aliases, got ${maxAliases} aliases.`);
}

function argValue(v: GqlValue, variables: Record<string, unknown>): unknown {
  if (Array.isArray(v)) return v.map((x) => argValue(x, variables));
  if (v && typeof v === 'object') {
    if ('variable' in v && typeof v.variable === 'string' && Object.keys(v).length === 1) return variables[v.variable];
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, argValue(x as GqlValue, variables)]));
  }
  return v;
}

// A field's value from an object's own properties: `constructor` or `toString` is in every object, and no field of
// one. Objects built here from names in a query are built from entries, so that __proto__ is a name like any other.
const own = <T>(source: Record<string, T>, name: string): T | undefined => (Object.hasOwn(source, name) ? source[name] : undefined);

async function project(value: unknown, field: Field, doc: Document): Promise<unknown> {
  if (typeof value === 'function') value = await (value as Lazy)();
  const name = field.name;
  if (LONG.has(name)) return value === undefined || value === null ? '0' : String(value);
  if (BOOLEAN.has(name)) return Boolean(value);
  if (name === 'value' && typeof value === 'string') return value === 'NaN' ? null : Number(value);
  // Absent, as protobuf reads it: an empty list, an empty string for a text field, no object.
  if (value === undefined || value === null) return LISTS.has(name) ? [] : field.selections.length ? null : '';
  if (Array.isArray(value)) return Promise.all(value.map((item) => project(item, field, doc)));
  if (typeof value !== 'object' || !field.selections.length) return value;
  const source = value as Record<string, unknown>;
  const entries: [string, unknown][] = [];
  for (const child of fieldsOf(field.selections, doc)) {
    const v = child.name === '__typename' ? undefined : (own(source, child.name) ?? own(source, snake(child.name)));
    entries.push([child.alias ?? child.name, await project(v, child, doc)]);
  }
  return Object.fromEntries(entries);
}

/** Runs the operation asked for; a refused root field answers its apiError, as MLflow's resolvers do. */
export async function execute(
  deps: TrackerDeps,
  doc: Document,
  operationName: string | undefined,
  variables: Record<string, unknown>,
): Promise<{ data: Record<string, unknown> | null; errors: string[] | null }> {
  const op = operationName ? doc.operations.find((o) => o.name === operationName) : doc.operations[0];
  if (!op) return { data: null, errors: [operationName ? `Unknown operation named '${operationName}'.` : 'Must provide an operation.'] };
  const roots = resolvers(deps);
  const answered: [string, unknown][] = [];
  const errors: string[] = [];
  for (const field of fieldsOf(op.selections, doc)) {
    const key = field.alias ?? field.name;
    if (field.name === '__typename') {
      answered.push([key, op.type === 'mutation' ? 'Mutation' : 'Query']);
      continue;
    }
    const resolve = own(roots, field.name);
    if (!resolve) {
      errors.push(`Cannot query field '${field.name}' on type '${op.type === 'mutation' ? 'Mutation' : 'Query'}'.`);
      continue;
    }
    const args = Object.fromEntries(Object.entries(field.args).map(([k, v]) => [k, argValue(v, variables)]));
    let result: unknown;
    try {
      result = await resolve((snakeKeys(args.input ?? {}) as Record<string, unknown>) ?? {}, args);
    } catch (err) {
      if (!(err instanceof TrackerError)) throw err;
      result = { apiError: { code: err.code, message: err.message } };
    }
    answered.push([key, await project(result, field, doc)]);
  }
  // entries, not assignments: an alias such as __proto__ is a key of the answer like any other
  const data = errors.length && answered.length === 0 ? null : Object.fromEntries(answered);
  return { data, errors: errors.length ? errors : null };
}
