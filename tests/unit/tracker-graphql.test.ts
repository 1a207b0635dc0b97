import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// MLflow's GraphQL API, as its web UI queries it: the root fields answered from the same data as the REST API,
// MLflow's scalar types (64-bit integers as strings, NaN as null), `errors` as strings, and its limits on a query.
describe('tracker GraphQL', () => {
  let t: TrackerHarness;
  let exp: string;
  let runId: string;
  beforeAll(async () => {
    t = await trackerHarness();
    exp = (await t.post('experiments/create', { name: 'GraphqlTest' })).body.experiment_id;
    runId = (await t.post('runs/create', { experiment_id: exp, start_time: 10 })).body.run.info.run_id;
  });
  afterAll(async () => t?.close());

  const gql = async (query: string, path = '/graphql') => {
    const res = await t.post(path, { query, operationName: 'q' });
    expect(res.status, res.text).toBe(200);
    return res.body as { data: any; errors: string[] | null };
  };

  it('echoes the test field and reads an experiment, under /graphql and /ajax-api/graphql', async () => {
    expect((await gql('query q { test(inputString: "abc") { output } }')).data).toEqual({ test: { output: 'abc' } });
    for (const path of ['/graphql', '/ajax-api/graphql']) {
      const res = await gql(`query q { mlflowGetExperiment(input: {experimentId: "${exp}"}) { experiment { name } } }`, path);
      expect(res).toEqual({ data: { mlflowGetExperiment: { experiment: { name: 'GraphqlTest' } } }, errors: null });
    }
  });

  it('reads a run with its experiment, registered versions and metrics (NaN as null, integers as strings)', async () => {
    await t.post('registered-models/create', { name: 'GraphqlTest' });
    await t.post('model-versions/create', { name: 'GraphqlTest', source: `runs:/${runId}/model`, run_id: runId });
    await t.post('runs/log-batch', {
      run_id: runId,
      metrics: [
        { key: 'normal', value: 123, timestamp: 1, step: 1 },
        { key: 'nan', value: 'NaN', timestamp: 2, step: 2 },
      ],
    });
    const res = await gql(`query q @component(name: "Test") {
      mlflowGetRun(input: {runId: "${runId}"}) {
        run { info { status startTime } experiment { name } modelVersions { name } data { metrics { key value timestamp step } } }
      } }`);
    expect(res.errors).toBeNull();
    const run = res.data.mlflowGetRun.run;
    expect(run.info).toEqual({ status: 'RUNNING', startTime: '10' });
    expect(run.experiment.name).toBe('GraphqlTest');
    expect(run.modelVersions).toEqual([{ name: 'GraphqlTest' }]);
    expect(run.data.metrics).toEqual([
      { key: 'nan', value: null, timestamp: '2', step: '2' },
      { key: 'normal', value: 123, timestamp: '1', step: '1' },
    ]);
  });

  it('searches runs newest first, lists artifacts, samples metric history and lists datasets', async () => {
    const other = (await t.post('experiments/create', { name: 'gql-search' })).body.experiment_id;
    const first = (await t.post('runs/create', { experiment_id: other, start_time: 1 })).body.run.info.run_id;
    const second = (await t.post('runs/create', { experiment_id: other, start_time: 2 })).body.run.info.run_id;
    const runs = await gql(`mutation q { mlflowSearchRuns(input: { experimentIds: ["${other}"] }) { runs { info { runId } } } }`);
    expect(runs.data.mlflowSearchRuns.runs).toEqual([{ info: { runId: second } }, { info: { runId: first } }]);

    const key = `${other}/${first}/artifacts`;
    await t.call('PUT', `/api/2.0/mlflow-artifacts/artifacts/${key}/test.txt`, 'hello world');
    await t.call('PUT', `/api/2.0/mlflow-artifacts/artifacts/${key}/testDir/test.txt`, 'hello world');
    const files = await gql(`query q { files: mlflowListArtifacts(input: {runId: "${first}"}) { files { path isDir fileSize } } }`);
    expect(files.data.files.files).toEqual([
      { path: 'test.txt', isDir: false, fileSize: '11' },
      { path: 'testDir', isDir: true, fileSize: '0' },
    ]);

    await t.post('runs/log-batch', {
      run_id: first,
      metrics: Array.from({ length: 10 }, (_, i) => ({ key: 'm', value: i, timestamp: 5, step: i })),
    });
    const history = await gql(
      `query q { mlflowGetMetricHistoryBulkInterval(input: {runIds: ["${first}"], metricKey: "m"}) { metrics { key value } } }`,
    );
    expect(history.data.mlflowGetMetricHistoryBulkInterval.metrics).toEqual(Array.from({ length: 10 }, (_, i) => ({ key: 'm', value: i })));

    await t.post('runs/log-inputs', {
      run_id: first,
      datasets: [
        {
          tags: [{ key: 'mlflow.data.context', value: 'training' }],
          dataset: { name: 'd', digest: '1', source_type: 'code', source: 's' },
        },
        { dataset: { name: 'e', digest: '2', source_type: 'code', source: 's' } },
      ],
    });
    const datasets = await gql(
      `mutation q { mlflowSearchDatasets(input: {experimentIds: ["${other}"]}) { datasetSummaries { experimentId name digest context } } }`,
    );
    // A summary without a context has the empty string, as protobuf reads an absent text field.
    expect(datasets.data.mlflowSearchDatasets.datasetSummaries).toEqual([
      { experimentId: other, name: 'd', digest: '1', context: 'training' },
      { experimentId: other, name: 'e', digest: '2', context: '' },
    ]);
  });

  it("answers MLflow's UI's own query, its input in a variable", async () => {
    await t.post('runs/log-batch', { run_id: runId, metrics: [{ key: 'ui', value: 1.5, timestamp: 7, step: 3 }] });
    const query = `query GetMetricHistoryBulkInterval($data: MlflowGetMetricHistoryBulkIntervalInput!)
      @component(name: "MLflow.ExperimentRunTracking") {
        mlflowGetMetricHistoryBulkInterval(input: $data) { __typename metrics { timestamp step runId key value } apiError { code message } }
      }`;
    const res = await t.post('/ajax-api/graphql', {
      query,
      operationName: 'GetMetricHistoryBulkInterval',
      variables: { data: { runIds: [runId], metricKey: 'ui', maxResults: 320 } },
    });
    expect(res.body).toEqual({
      data: {
        mlflowGetMetricHistoryBulkInterval: {
          __typename: 'MlflowGetMetricHistoryBulkIntervalResponse',
          metrics: [{ timestamp: '7', step: '3', runId, key: 'ui', value: 1.5 }],
          apiError: null,
        },
      },
      errors: null,
    });
  });

  it('answers a refused root field in errors, the field null, as MLflow raises it', async () => {
    const res = await gql(
      'query q { mlflowGetExperiment(input: {experimentId: "999"}) { experiment { name } apiError { code message } } }',
    );
    expect(res.data.mlflowGetExperiment).toBeNull();
    expect(res.errors).toEqual(['No Experiment with id=999 exists']);
  });

  it('knows no field by a name every JavaScript object has', async () => {
    const root = await gql('query q { constructor { name } }');
    expect(root).toEqual({ data: null, errors: ["Cannot query field 'constructor' on type 'Query'."] });
    // an alias is a key of the answer, whatever it is called
    const aliased = await gql('query q { __proto__: test(inputString: "a") { output } b: test(inputString: "b") { output } }');
    expect(aliased.errors).toBeNull();
    expect(Object.entries(aliased.data)).toEqual([
      ['__proto__', { output: 'a' }],
      ['b', { output: 'b' }],
    ]);
    // a field the type lacks is refused before anything runs, an inherited name like any other (MLflow's words)
    const nested = await gql(
      `query q { mlflowGetExperiment(input: {experimentId: "${exp}"}) { experiment { name nosuch constructor toString } } }`,
    );
    expect(nested).toEqual({
      data: null,
      errors: [
        "Cannot query field 'nosuch' on type 'MlflowExperiment'.",
        "Cannot query field 'constructor' on type 'MlflowExperiment'.",
        "Cannot query field 'toString' on type 'MlflowExperiment'.",
      ],
    });
  });

  it.each([
    [
      'root fields',
      `query q { ${Array.from({ length: 12 }, (_, i) => `k${i}: test(inputString: "a") { output }`).join(' ')} }`,
      'GraphQL queries should have at most 10 root fields',
    ],
    [
      'aliases',
      `query q { mlflowGetExperiment(input: {experimentId: "0"}) { ${Array.from({ length: 12 }, (_, i) => `e${i}: experiment { name }`).join(' ')} } }`,
      'queries should have at most 10 aliases',
    ],
    [
      'depth',
      `query q { mlflowGetExperiment(input: {experimentId: "0"}) { experiment { ${'name { '.repeat(12)}name${' }'.repeat(12)} } } }`,
      'Query exceeds maximum depth of 10',
    ],
    [
      'selections',
      `query q { mlflowGetExperiment(input: {experimentId: "0"}) { experiment { ${Array.from({ length: 1002 }, (_, i) => `f${i} { name }`).join(' ')} } } }`,
      'Query exceeds maximum total selections of 1000',
    ],
    ['syntax', 'query q { test(', 'Syntax Error'],
  ])('refuses a query over the limit of %s, running nothing', async (_what, query, message) => {
    const res = await gql(query);
    expect(res.data).toBeNull();
    expect(res.errors![0]).toContain(message);
  });
});
