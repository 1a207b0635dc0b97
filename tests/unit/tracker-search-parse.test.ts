import { describe, expect, it } from 'vitest';
import type { Sql } from '../../src/platform/db/index.ts';
import { TrackerError } from '../../src/tracker/errors.ts';
import { searchEvaluationDatasets } from '../../src/tracker/evaluation-datasets/search.ts';
import { searchExperiments } from '../../src/tracker/experiments/search.ts';
import { searchLoggedModels } from '../../src/tracker/logged-models/search.ts';
import { searchModelVersions, searchRegisteredModels } from '../../src/tracker/registry/search.ts';
import { searchRuns } from '../../src/tracker/runs/search.ts';
import { parseFilter, parseOrderBy } from '../../src/tracker/search/index.ts';
import { searchTraces } from '../../src/tracker/traces/search.ts';

// The grammar alone: what parses to what, and every refusal with its message. Refusals happen before any SQL, so
// a recording stand-in for the database is enough; it also shows that user text only ever travels as parameters.

function recordingSql(): Sql & { statements: { text: string; params: readonly unknown[] }[] } {
  const statements: { text: string; params: readonly unknown[] }[] = [];
  return {
    statements,
    query: async <T>(text: string, params: readonly unknown[] = []) => {
      statements.push({ text, params });
      return [] as T[];
    },
    exec: async () => {},
    copyIn: async () => {},
  };
}

async function refusal(run: () => Promise<unknown>): Promise<string> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TrackerError);
  expect((error as TrackerError).code).toBe('INVALID_PARAMETER_VALUE');
  expect((error as TrackerError).status).toBe(400);
  return (error as TrackerError).message;
}

describe('parseFilter accepts', () => {
  it.each([
    ['metrics.acc > 0.9', { entity: 'metrics', key: 'acc' }, '>', { kind: 'number', value: 0.9 }],
    ['metrics.loss <= -1.5e-3', { entity: 'metrics', key: 'loss' }, '<=', { kind: 'number', value: -0.0015 }],
    ['metrics.acc >= .5', { entity: 'metrics', key: 'acc' }, '>=', { kind: 'number', value: 0.5 }],
    ["params.lr = '0.01'", { entity: 'params', key: 'lr' }, '=', { kind: 'string', value: '0.01' }],
    ['params.model = "LogisticRegression"', { entity: 'params', key: 'model' }, '=', { kind: 'string', value: 'LogisticRegression' }],
    ["tags.mlflow.runName != 'x'", { entity: 'tags', key: 'mlflow.runName' }, '!=', { kind: 'string', value: 'x' }],
    ['metrics."my metric" < 3', { entity: 'metrics', key: 'my metric' }, '<', { kind: 'number', value: 3 }],
    ['metrics.`a b` = 1', { entity: 'metrics', key: 'a b' }, '=', { kind: 'number', value: 1 }],
    ["metrics.'prediction accuracy' >= 0.945", { entity: 'metrics', key: 'prediction accuracy' }, '>=', { kind: 'number', value: 0.945 }],
    ['`metrics`.`1st-try` = 1', { entity: 'metrics', key: '1st-try' }, '=', { kind: 'number', value: 1 }],
    ['params.1abc = "v"', { entity: 'params', key: '1abc' }, '=', { kind: 'string', value: 'v' }],
    ['metrics.précision>=-.5', { entity: 'metrics', key: 'précision' }, '>=', { kind: 'number', value: -0.5 }],
    ['tags."mlflow.user"=\'me\'', { entity: 'tags', key: 'mlflow.user' }, '=', { kind: 'string', value: 'me' }],
    ["run_id IN('a','b')", { entity: undefined, key: 'run_id' }, 'IN', { kind: 'list', values: ['a', 'b'] }],
    ["status like 'FIN%'", { entity: undefined, key: 'status' }, 'LIKE', { kind: 'string', value: 'FIN%' }],
    ["tags.team iLike 'ml'", { entity: 'tags', key: 'team' }, 'ILIKE', { kind: 'string', value: 'ml' }],
    ["`run name` = 'it''s'", { entity: undefined, key: 'run name' }, '=', { kind: 'string', value: "it's" }],
    ["params.q = 'say \\'hi\\''", { entity: 'params', key: 'q' }, '=', { kind: 'string', value: "say 'hi'" }],
    ['run_id IN (\'a\', "b")', { entity: undefined, key: 'run_id' }, 'IN', { kind: 'list', values: ['a', 'b'] }],
    ["attributes.run_id not in ('a')", { entity: 'attributes', key: 'run_id' }, 'NOT IN', { kind: 'list', values: ['a'] }],
  ])('%s', (filter, identifier, op, value) => {
    const [comparison] = parseFilter(filter);
    expect(comparison?.identifier).toMatchObject(identifier);
    expect(comparison?.op).toBe(op);
    expect(comparison?.value).toMatchObject(value);
  });

  it('joins comparisons with AND in any case, and an empty filter is no condition', () => {
    expect(parseFilter("metrics.a > 1 and params.b = 'x' AND tags.c != 'y'").map((c) => c.identifier.key)).toEqual(['a', 'b', 'c']);
    expect(parseFilter('   ')).toEqual([]);
    expect(parseFilter(undefined)).toEqual([]);
  });

  it('reads order_by entries', () => {
    expect(parseOrderBy('metrics.acc DESC')).toMatchObject({ identifier: { entity: 'metrics', key: 'acc' }, ascending: false });
    expect(parseOrderBy('metrics.`my metric` asc')).toMatchObject({ identifier: { key: 'my metric' }, ascending: true });
    expect(parseOrderBy('  start_time  ')).toMatchObject({ identifier: { entity: undefined, key: 'start_time' }, ascending: true });
    expect(parseOrderBy('`metrics.acc` DESC')).toMatchObject({ identifier: { entity: 'metrics', key: 'acc' }, ascending: false });
  });
});

describe('search_runs refuses', () => {
  it.each([
    ['metrics.a > 1 OR metrics.b < 2', "Invalid clause(s) in filter string: 'OR metrics.b < 2'. Only AND is supported"],
    ['metrics.a > 1 metrics.b < 2', "Invalid clause(s) in filter string: 'metrics.b < 2'"],
    ['(metrics.a > 1)', "Invalid clause(s) in filter string: '(metrics.a > 1)'"],
    ['metrics.a > 1 AND', "Invalid clause(s) in filter string: 'metrics.a > 1 AND'. A condition must follow AND."],
    ['metrics.a', "Invalid comparison clause 'metrics.a': expected a comparator"],
    ['metrics.a >', "Invalid comparison clause 'metrics.a >': expected a value after '>'"],
    ["metrics.a AND params.b = 'x'", "Invalid comparison clause 'metrics.a AND': expected a comparator"],
    ["metrics.a > AND params.b = 'x'", "Invalid comparison clause 'metrics.a > AND': expected a value after '>'"],
    ['metrics.val-loss > 1', "unexpected '-'"],
    ["params.x = 'open", 'unterminated'],
    ['metrics. > 1', "expected a name after '.'"],
    ['foo.bar = 1', "Invalid entity type 'foo'. Valid values are ['metric', 'parameter', 'tag', 'attribute', 'dataset']"],
    ['constructor.bar = 1', "Invalid entity type 'constructor'. Valid values are ['metric', 'parameter', 'tag', 'attribute', 'dataset']"],
    ["attributes.color = 'red'", "Invalid attribute key 'color' specified. Valid keys are"],
    ["nonsense = 'x'", "Invalid attribute key 'nonsense' specified."],
    ["datasets.size = 'x'", "Invalid dataset key 'size' specified. Valid keys are 'name', 'digest', 'context'"],
    ["metrics.acc = 'high'", "Expected numeric value type for metric. Found 'high'"],
    ['metrics.acc LIKE 1', "Invalid comparator 'LIKE' for metric 'acc'"],
    ['metrics.acc == 1', "Invalid comparator '==' for metric 'acc'"],
    ['metrics.acc <> 1', "Invalid comparator '<>' for metric 'acc'"],
    ['params.lr = 0.01', 'Expected a quoted string value for parameter'],
    ['params.lr = abc', 'Parameter value is either not quoted or unidentified quote types used for string value abc'],
    ["params.lr > '1'", "Invalid comparator '>' for parameter 'lr'"],
    ["tags.t IN ('a')", "Invalid comparator 'IN' for tag 't'"],
    ["status IN ('FINISHED')", "Only the 'run_id' attribute supports comparison with a list of quoted string values."],
    ['run_id IN ()', 'expected a non-empty list of string values, but got empty list'],
    ["run_id IN ('a', 1)", 'expected string value, punctuation, or whitespace, but got different type in list'],
    ["run_id IN 'a'", 'expected a list of quoted strings'],
    ["start_time > '5'", 'Expected numeric value type for numeric attribute: start_time'],
    ['end_time LIKE 5', "Invalid comparator 'LIKE' for numeric attribute 'end_time'"],
    ['status = 5', 'Expected a quoted string value for attributes. Got value 5'],
    ["status > 'A'", "Invalid comparator '>' for attribute 'status'"],
    ['tags.t IS NULL', 'IS NULL and IS NOT NULL are not supported'],
    ["datasets.name > 'a'", "Invalid comparator '>' for dataset 'name'"],
  ])('%s', async (filter, message) => {
    const db = recordingSql();
    expect(await refusal(() => searchRuns(db, { experimentIds: ['1'], filter, maxResults: 10 }))).toContain(message);
    expect(db.statements).toHaveLength(0);
  });

  it.each(['abc', '1.5', '-1', '99999999999999999999999'])('an experiment id %s, before any SQL', async (id) => {
    const db = recordingSql();
    expect(await refusal(() => searchRuns(db, { experimentIds: ['1', id], maxResults: 10 }))).toBe(
      `Invalid experiment id '${id}': experiment ids are integers.`,
    );
    expect(db.statements).toHaveLength(0);
  });

  it('bad order_by entries', async () => {
    const db = recordingSql();
    const order = (orderBy: string[]) => refusal(() => searchRuns(db, { experimentIds: ['1'], orderBy, maxResults: 10 }));
    expect(await order(['metrics.acc DESC extra'])).toBe("Invalid order_by clause 'metrics.acc DESC extra'. Could not be parsed.");
    expect(await order(['metrics.acc sideways'])).toBe("Invalid ordering key in order_by clause 'metrics.acc sideways'.");
    expect(await order(["'acc'"])).toBe("Invalid order_by clause ''acc''. Could not be parsed.");
    expect(await order(['metrics.acc', 'metrics.acc DESC'])).toContain('`order_by` contains duplicate fields');
    expect(await order(['created', 'start_time'])).toContain('`order_by` contains duplicate fields');
  });

  it('keeps user text out of the SQL', async () => {
    const db = recordingSql();
    const evil = `x'; DROP TABLE tracker_runs; --`;
    await searchRuns(db, {
      experimentIds: ['1'],
      filter: `params."${evil}" = '${evil.replace(/'/g, "''")}' AND tags.\`${evil}\` LIKE 'a'`,
      orderBy: [`metrics.\`${evil}\` DESC`],
      maxResults: 10,
    });
    expect(db.statements).toHaveLength(1);
    expect(db.statements[0]!.text).not.toContain('DROP');
    expect(db.statements[0]!.params).toContain(evil);
  });
});

describe('the other searches refuse', () => {
  const db = recordingSql();
  it.each([
    [
      () => searchExperiments(db, { filter: 'metrics.a > 1', maxResults: 10 }),
      "Invalid entity type 'metrics'. Valid entity types are ('attribute', 'tag', 'tags')",
    ],
    [
      () => searchExperiments(db, { filter: "artifact_location = 'x'", maxResults: 10 }),
      "Invalid attribute key 'artifact_location' specified.",
    ],
    [
      () => searchExperiments(db, { filter: "creation_time > 'x'", maxResults: 10 }),
      'Expected numeric value type for numeric attribute: creation_time',
    ],
    [() => searchExperiments(db, { filter: "name > 'x'", maxResults: 10 }), "Invalid comparator '>' for string attribute 'name'"],
    [() => searchExperiments(db, { orderBy: ['tags.x'], maxResults: 10 }), 'Invalid order_by entity: tag'],
    [() => searchExperiments(db, { orderBy: ['artifact_location'], maxResults: 10 }), "Invalid attribute key 'artifact_location'"],
    [() => searchExperiments(db, { maxResults: 50_001 }), 'It must be at most 50000'],
    [
      () => searchRegisteredModels(db, { filter: "run_id = 'x'", maxResults: 10 }),
      "Invalid attribute key 'run_id' specified. Valid keys are 'name'",
    ],
    [
      () => searchRegisteredModels(db, { filter: "name IN ('a')", maxResults: 10 }),
      "Only the 'run_id' attribute supports comparison with a list",
    ],
    [() => searchRegisteredModels(db, { filter: "params.x = 'a'", maxResults: 10 }), "Invalid entity type 'params'"],
    [() => searchRegisteredModels(db, { orderBy: ['version DESC'], maxResults: 10 }), "Invalid order by key 'version' specified."],
    [() => searchRegisteredModels(db, { maxResults: 1001 }), 'It must be at most 1000'],
    [
      () => searchModelVersions(db, { filter: "name IN ('a')", maxResults: 10 }),
      "Only the 'run_id' attribute supports comparison with a list",
    ],
    [() => searchModelVersions(db, { filter: "run_id NOT IN ('a')", maxResults: 10 }), "Invalid comparator 'NOT IN' for a list of run ids"],
    [
      () => searchModelVersions(db, { filter: "version_number = 'one'", maxResults: 10 }),
      'Expected numeric value type for numeric attribute: version_number',
    ],
    [() => searchModelVersions(db, { filter: "current_stage = 'Production'", maxResults: 10 }), "Invalid attribute key 'current_stage'"],
    [
      () => searchTraces(db, { experimentIds: [1], filter: "timestamp_ms > 'x'", maxResults: 10, orderBy: [] }),
      'Expected numeric value type for numeric attribute: timestamp_ms',
    ],
    [
      () => searchTraces(db, { experimentIds: [1], filter: 'execution_time_ms LIKE 5', maxResults: 10, orderBy: [] }),
      "Invalid comparator 'LIKE' for numeric attribute 'execution_time_ms'",
    ],
    [
      () => searchEvaluationDatasets(db, { experimentIds: [1], filter: "created_time > 'x'", maxResults: 10, orderBy: [] }),
      'Expected numeric value type for numeric attribute: created_time',
    ],
    [
      () => searchExperiments(db, { filter: 'last_update_time LIKE 5', maxResults: 10 }),
      "Invalid comparator 'LIKE' for numeric attribute 'last_update_time'",
    ],
    [() => searchModelVersions(db, { maxResults: 200_001 }), 'It must be at most 200000'],
    [
      () => searchLoggedModels(db, { experimentIds: ['1'], filter: 'metric.acc > 1', maxResults: 10 }),
      "Invalid entity type: 'metric'. Expected one of ['attributes', 'metrics', 'params', 'tags'].",
    ],
    [
      () => searchLoggedModels(db, { experimentIds: ['1'], filter: "metrics.acc LIKE 'x'", maxResults: 10 }),
      "Invalid comparator 'LIKE' for metrics.acc",
    ],
    [() => searchLoggedModels(db, { experimentIds: ['1'], filter: "color = 'x'", maxResults: 10 }), "Invalid attribute key 'color'"],
    [
      () => searchLoggedModels(db, { experimentIds: ['1'], orderBy: [{ field_name: 'params.x' }], maxResults: 10 }),
      'Invalid order by field name: params, only `metrics.<name>` is allowed.',
    ],
    [
      () => searchLoggedModels(db, { experimentIds: ['1'], orderBy: [{ field_name: 'color' }], maxResults: 10 }),
      'Invalid order by field name: color.',
    ],
    [
      () => searchLoggedModels(db, { experimentIds: ['1'], orderBy: [{ field_name: 'metrics.a', dataset_digest: 'd' }], maxResults: 10 }),
      '`dataset_digest` can only be specified if `dataset_name` is also specified.',
    ],
    [
      () => searchLoggedModels(db, { experimentIds: ['1'], orderBy: [{ field_name: '' }], maxResults: 10 }),
      '`field_name` in the `order_by` clause must be specified.',
    ],
  ])('%#', async (run, message) => {
    expect(await refusal(run)).toContain(message);
  });
});

// Names every JavaScript object inherits are no attribute: each is refused as an unknown key, before any SQL is sent
describe('an inherited name is no attribute', () => {
  it.each([
    [
      'runs filter',
      (db: Sql) => searchRuns(db, { experimentIds: ['1'], filter: "attributes.constructor = 'x'", maxResults: 10 }),
      "Invalid attribute key 'constructor'",
    ],
    [
      'runs order',
      (db: Sql) => searchRuns(db, { experimentIds: ['1'], orderBy: ['attributes.toString'], maxResults: 10 }),
      "Invalid attribute key 'toString'",
    ],
    [
      'experiments filter',
      (db: Sql) => searchExperiments(db, { filter: "valueOf = 'x'", maxResults: 10 }),
      "Invalid attribute key 'valueOf'",
    ],
    [
      'experiments order',
      (db: Sql) => searchExperiments(db, { orderBy: ['constructor'], maxResults: 10 }),
      "Invalid attribute key 'constructor'",
    ],
    [
      'model versions filter',
      (db: Sql) => searchModelVersions(db, { filter: "hasOwnProperty = 'x'", maxResults: 10 }),
      "Invalid attribute key 'hasOwnProperty'",
    ],
    [
      'model versions order',
      (db: Sql) => searchModelVersions(db, { orderBy: ['constructor'], maxResults: 10 }),
      "Invalid attribute key 'constructor'",
    ],
    [
      'registered models order',
      (db: Sql) => searchRegisteredModels(db, { orderBy: ['constructor'], maxResults: 10 }),
      "Invalid order by key 'constructor'",
    ],
    [
      'traces filter',
      (db: Sql) => searchTraces(db, { experimentIds: [1], filter: "constructor = 'x'", maxResults: 10, orderBy: [] }),
      "Invalid attribute key 'constructor'",
    ],
    [
      'evaluation datasets order',
      (db: Sql) => searchEvaluationDatasets(db, { experimentIds: [1], orderBy: ['__proto__'], maxResults: 10 }),
      "Invalid attribute key '__proto__'",
    ],
    [
      'logged models filter',
      (db: Sql) => searchLoggedModels(db, { experimentIds: ['1'], filter: "constructor = 'x'", maxResults: 10 }),
      "Invalid attribute key 'constructor'",
    ],
    [
      'logged models order',
      (db: Sql) => searchLoggedModels(db, { experimentIds: ['1'], orderBy: [{ field_name: 'toString' }], maxResults: 10 }),
      'Invalid order by field name: toString.',
    ],
  ])('%s', async (_, run, message) => {
    const db = recordingSql();
    expect(await refusal(() => run(db))).toContain(message);
    expect(db.statements).toHaveLength(0);
  });
});
