import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';
import { recordingDatabase } from '../support/counting-sql.ts';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// Hostile GraphQL documents (issue 31, finding 4): a query of a few kilobytes that would expand to billions of
// fields, nest thousands deep, or multiply an expensive field is refused by the limit it breaks before anything
// runs, and no statement reaches the database.

/** Fragments F0..F(n-1) on `type`, each spreading the next `width` times; the last one holds `leaf`. */
function fragmentChain(prefix: string, type: string, n: number, width: number, leaf: string): string {
  return Array.from({ length: n }, (_, i) =>
    i === n - 1
      ? `fragment ${prefix}${i} on ${type} { ${leaf} }`
      : `fragment ${prefix}${i} on ${type} { ${Array(width)
          .fill(`...${prefix}${i + 1}`)
          .join(' ')} }`,
  ).join('\n');
}

const experimentOf = (spread: string) => `query q { mlflowGetExperiment(input: {experimentId: "0"}) { experiment { ${spread} } } }`;

const BOMBS: [string, string, string][] = [
  [
    '32 fragments, each spreading the next twice (2^31 fields)',
    `${experimentOf('...F0')}\n${fragmentChain('F', 'MlflowExperiment', 32, 2, 'name')}`,
    'Query exceeds maximum total selections of 1000',
  ],
  [
    'fragments spread in wide lists (40 spreads a level, 5 levels: 2.5 million fields)',
    `${experimentOf('...W0')}\n${fragmentChain('W', 'MlflowExperiment', 5, 40, 'name')}`,
    'Query exceeds maximum total selections of 1000',
  ],
  [
    'many aliases of an expensive root field, through 24 fragments that each spread the next twice',
    `query q { ...R0 }\n${fragmentChain('R', 'Query', 24, 2, 'e: mlflowSearchRuns(input: {experimentIds: ["0"]}) { runs { experiment { name } } }')}`,
    'GraphQL queries should have at most 10 root fields',
  ],
  [
    'many aliases of an expensive nested field, through fragments',
    `query q { mlflowSearchRuns(input: {experimentIds: ["0"]}) { runs { ...A0 } } }\n${fragmentChain('A', 'MlflowRunExtension', 20, 2, 'v: modelVersions { name }')}`,
    'GraphQL queries should have at most 10 aliases',
  ],
  [
    'one field asked 998 times at one level (half a million comparisons for the standard rules)',
    experimentOf(Array(998).fill('name').join(' ')),
    'Query is too costly to validate',
  ],
  [
    'selections nested 20 000 deep',
    `query q { ${'a{'.repeat(20_000)}a${'}'.repeat(20_000)} }`,
    'Query exceeds maximum nesting of 64 brackets',
  ],
  [
    'an argument nested 10 000 deep',
    `query q { test(inputString: ${'['.repeat(10_000)}${']'.repeat(10_000)}) { output } }`,
    'Query exceeds maximum nesting of 64 brackets',
  ],
  [
    'a chain of 1 000 fragments, each spreading the next once',
    `query q { ...C0 }\n${fragmentChain('C', 'Query', 1000, 1, '__typename')}`,
    'Query exceeds maximum of 50 fragments, got 1000',
  ],
];

describe('tracker GraphQL under hostile documents', () => {
  let t: TrackerHarness;
  let statements: string[];
  beforeAll(async () => {
    const db = recordingDatabase(await openPglite({}));
    statements = db.statements;
    t = await trackerHarness({ db });
    // the process's first query pays for compiling graphql-js once, whatever it asks
    expect((await t.post('/graphql', { query: '{ test(inputString: "warm") { output } }' })).body.data).toEqual({
      test: { output: 'warm' },
    });
  });
  afterAll(async () => t?.close());

  // The refusal comes from the shape rule, which measures each fragment once and runs before the standard rules and
  // execution: the message names the limit, and not one statement runs.
  it.each(BOMBS)('refuses %s by its limit, running nothing', async (_what, query, message) => {
    expect(query.length).toBeLessThan(64 * 1024);
    statements.length = 0;
    const res = await t.post('/graphql', { query, operationName: 'q' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toBeNull();
    expect(res.body.errors.join('\n')).toContain(message);
    expect(statements).toEqual([]);
  });

  it('refuses a document over the size and token limits, and says which', async () => {
    const long = await t.post('/graphql', { query: `query q { test(inputString: "${'x'.repeat(70_000)}") { output } }` });
    expect(long.body).toEqual({ data: null, errors: ['Query exceeds maximum length of 65536 characters'] });
    const many = await t.post('/graphql', { query: `query q { ${'a '.repeat(10_001)}}` });
    expect(many.body).toEqual({ data: null, errors: ['Query exceeds maximum of 10000 tokens'] });
  });

  it('loads the experiments and versions of a page of runs in statements that do not grow with the page', async () => {
    const exp = (await t.post('experiments/create', { name: 'gql-batch' })).body.experiment_id;
    await t.post('registered-models/create', { name: 'gql-batch' });
    const addRuns = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const runId = (await t.post('runs/create', { experiment_id: exp })).body.run.info.run_id;
        await t.post('model-versions/create', { name: 'gql-batch', source: `runs:/${runId}/model`, run_id: runId });
      }
    };
    // ten aliases a level (MLflow's limit), each an expensive field of every run
    const aliases = [0, 1, 2, 3, 4].map((i) => `e${i}: experiment { name } v${i}: modelVersions { runId }`).join(' ');
    const query = `query q { mlflowSearchRuns(input: {experimentIds: ["${exp}"]}) { runs { info { runId } ${aliases} } } }`;
    const countStatements = async (runs: number) => {
      statements.length = 0;
      const res = await t.post('/graphql', { query });
      expect(res.body.errors).toBeNull();
      const found = res.body.data.mlflowSearchRuns.runs as any[];
      expect(found).toHaveLength(runs);
      for (const run of found) {
        for (const i of [0, 1, 2, 3, 4]) {
          expect(run[`e${i}`]).toEqual({ name: 'gql-batch' });
          expect(run[`v${i}`]).toEqual([{ runId: run.info.runId }]);
        }
      }
      return statements.length;
    };
    await addRuns(2);
    const few = await countStatements(2);
    await addRuns(18);
    expect(await countStatements(20)).toBe(few);
  });
});
