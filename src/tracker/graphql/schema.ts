import {
  DirectiveLocation,
  GraphQLBoolean,
  GraphQLDirective,
  GraphQLFloat,
  type GraphQLInputType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLOutputType,
  GraphQLSchema,
  GraphQLString,
  specifiedDirectives,
} from 'graphql';
import type { z } from 'zod';
import { ListArtifacts, listRunArtifacts } from '../artifacts/run-routes.ts';
import { searchDatasets } from '../experiments/datasets.ts';
import { getExperiment } from '../experiments/load.ts';
import { ExperimentRef, SearchDatasets } from '../experiments/messages.ts';
import { loadModelVersions } from '../registry/load.ts';
import { SearchRegistry } from '../registry/messages.ts';
import { searchModelVersions } from '../registry/search.ts';
import { getRun, loadRuns } from '../runs/load.ts';
import { MetricHistoryBulkInterval, RunRef, SearchRuns } from '../runs/messages.ts';
import { metricHistoryBulkInterval } from '../runs/metrics.ts';
import { searchRuns } from '../runs/search.ts';
import { experimentIdOf } from '../wire/rules.ts';
import { parseMessage } from '../wire/request.ts';
import type { GraphqlContext } from './context.ts';
import {
  enumOf,
  fieldOf,
  type Fields,
  input,
  keyValue,
  listOf,
  LongString,
  metricValue,
  object,
  type Resolver,
  snakeKeys,
} from './fields.ts';

// MLflow's GraphQL schema (mlflow/server/graphql: the generated schema and its extensions), what its web UI
// queries. Each root field reads its input as the REST endpoint it mirrors reads its message and calls the same
// function; a refusal is an error of the answer and the field null, as MLflow's resolvers raise it (its own
// workspace tests read "Run with id=... not found" from `errors`). Its fields read the answers'
// MLflow JSON as protobuf reads a message (fields.ts).

const ErrorDetail = object('ErrorDetail', () => ({ field: GraphQLString, message: GraphQLString }));
const ApiError = object('ApiError', () => ({
  code: GraphQLString,
  message: GraphQLString,
  helpUrl: GraphQLString,
  traceId: GraphQLString,
  errorDetails: new GraphQLList(ErrorDetail),
}));

const MlflowExperiment = object('MlflowExperiment', () => ({
  experimentId: GraphQLString,
  name: GraphQLString,
  artifactLocation: GraphQLString,
  lifecycleStage: GraphQLString,
  lastUpdateTime: LongString,
  creationTime: LongString,
  tags: listOf(keyValue('MlflowExperimentTag')),
}));

// MLflow's schema has two metric types with the same fields: a model version's and a run's (its extension).
const metricFields = () => ({
  key: GraphQLString,
  value: { type: GraphQLFloat, resolve: metricValue },
  timestamp: LongString,
  step: LongString,
  datasetName: GraphQLString,
  datasetDigest: GraphQLString,
  modelId: GraphQLString,
  runId: GraphQLString,
});
const MlflowModelMetric = object('MlflowModelMetric', metricFields);
const MlflowModelVersionDeploymentJobState = object('MlflowModelVersionDeploymentJobState', () => ({
  jobId: GraphQLString,
  runId: GraphQLString,
  jobState: enumOf('MlflowDeploymentJobConnectionState', [
    'DEPLOYMENT_JOB_CONNECTION_STATE_UNSPECIFIED',
    'NOT_SET_UP',
    'CONNECTED',
    'NOT_FOUND',
    'REQUIRED_PARAMETERS_CHANGED',
  ]),
  runState: enumOf('MlflowModelVersionDeploymentJobStateDeploymentJobRunState', [
    'DEPLOYMENT_JOB_RUN_STATE_UNSPECIFIED',
    'NO_VALID_DEPLOYMENT_JOB_FOUND',
    'RUNNING',
    'SUCCEEDED',
    'FAILED',
    'PENDING',
    'APPROVAL',
  ]),
  currentTaskName: GraphQLString,
}));
const MlflowModelVersion = object('MlflowModelVersion', () => ({
  name: GraphQLString,
  version: GraphQLString,
  creationTimestamp: LongString,
  lastUpdatedTimestamp: LongString,
  userId: GraphQLString,
  currentStage: GraphQLString,
  description: GraphQLString,
  source: GraphQLString,
  runId: GraphQLString,
  status: enumOf('MlflowModelVersionStatus', ['PENDING_REGISTRATION', 'FAILED_REGISTRATION', 'READY']),
  statusMessage: GraphQLString,
  tags: listOf(keyValue('MlflowModelVersionTag')),
  runLink: GraphQLString,
  aliases: new GraphQLList(GraphQLString),
  modelId: GraphQLString,
  modelParams: listOf(object('MlflowModelParam', () => ({ name: GraphQLString, value: GraphQLString }))),
  modelMetrics: listOf(MlflowModelMetric),
  deploymentJobState: MlflowModelVersionDeploymentJobState,
}));

const MlflowMetric = object('MlflowMetricExtension', metricFields);
const MlflowRunInfo = object('MlflowRunInfo', () => ({
  runId: GraphQLString,
  runUuid: GraphQLString,
  runName: GraphQLString,
  experimentId: GraphQLString,
  userId: GraphQLString,
  status: enumOf('MlflowRunStatus', ['RUNNING', 'SCHEDULED', 'FINISHED', 'FAILED', 'KILLED']),
  startTime: LongString,
  endTime: LongString,
  artifactUri: GraphQLString,
  lifecycleStage: GraphQLString,
}));
const MlflowRunData = object('MlflowRunData', () => ({
  metrics: listOf(MlflowMetric),
  params: listOf(keyValue('MlflowParam')),
  tags: listOf(keyValue('MlflowRunTag')),
}));
const MlflowDataset = object('MlflowDataset', () => ({
  name: GraphQLString,
  digest: GraphQLString,
  sourceType: GraphQLString,
  source: GraphQLString,
  schema: GraphQLString,
  profile: GraphQLString,
}));
const MlflowRunInputs = object('MlflowRunInputs', () => ({
  datasetInputs: listOf(object('MlflowDatasetInput', () => ({ tags: listOf(keyValue('MlflowInputTag')), dataset: MlflowDataset }))),
  modelInputs: listOf(object('MlflowModelInput', () => ({ modelId: GraphQLString }))),
}));
const MlflowRunOutputs = object('MlflowRunOutputs', () => ({
  modelOutputs: listOf(object('MlflowModelOutput', () => ({ modelId: GraphQLString, step: LongString }))),
}));
const runIdOf = (run: unknown) => String(fieldOf(fieldOf(run, 'info'), 'run_id') ?? '');
/** A run as MLflow's GraphQL extension shows it: also its experiment and the versions registered from it. */
const MlflowRunExtension = object('MlflowRunExtension', () => ({
  info: MlflowRunInfo,
  data: MlflowRunData,
  inputs: MlflowRunInputs,
  outputs: MlflowRunOutputs,
  experiment: {
    type: MlflowExperiment,
    resolve: (run, _args, context) => context.experiment(String(fieldOf(fieldOf(run, 'info'), 'experiment_id') ?? '')),
  },
  modelVersions: { type: listOf(MlflowModelVersion), resolve: (run, _args, context) => context.versionsOfRun(runIdOf(run)) },
}));

const response = (name: string, fields: () => Fields) => object(name, () => ({ ...fields(), apiError: ApiError }));
const MlflowSearchRunsResponse = response('MlflowSearchRunsResponse', () => ({
  runs: listOf(MlflowRunExtension),
  nextPageToken: GraphQLString,
}));
const MlflowSearchRunsInput = input('MlflowSearchRunsInput', {
  experimentIds: new GraphQLList(GraphQLString),
  filter: GraphQLString,
  runViewType: enumOf('MlflowViewType', ['ACTIVE_ONLY', 'DELETED_ONLY', 'ALL']),
  maxResults: GraphQLInt,
  orderBy: new GraphQLList(GraphQLString),
  pageToken: GraphQLString,
});

/**
 * A root field: its `input` read as the REST endpoint's request message (snake_case, MLflow's checks and words),
 * then the endpoint's function; a refusal (TrackerError) is thrown: routes.ts answers it in `errors`.
 */
function rootField<S extends z.ZodType>(
  type: GraphQLOutputType,
  inputType: GraphQLInputType,
  message: S,
  answer: (m: z.output<S>, context: GraphqlContext) => Promise<unknown>,
) {
  const resolve: Resolver = async (_source, args, context) => answer(parseMessage(message, snakeKeys(args.input ?? {})), context);
  return { type, args: { input: { type: inputType } }, resolve };
}

const searchRunsField = rootField(MlflowSearchRunsResponse, MlflowSearchRunsInput, SearchRuns, async (m, { deps }) => {
  const found = await searchRuns(deps.db, {
    experimentIds: m.experiment_ids,
    maxResults: m.max_results,
    ...(m.filter ? { filter: m.filter } : {}),
    ...(m.run_view_type ? { runViewType: m.run_view_type } : {}),
    ...(m.order_by.length ? { orderBy: m.order_by } : {}),
    ...(m.page_token ? { pageToken: m.page_token } : {}),
  });
  return { runs: await loadRuns(deps.db, found.runIds), next_page_token: found.nextPageToken };
});

const echo = (name: string) => ({
  type: object(name, () => ({ output: GraphQLString })),
  description: 'Simple echoing field',
  args: { inputString: { type: GraphQLString } },
  resolve: ((_source, args) => ({ output: args.inputString })) as Resolver,
});

const Query = new GraphQLObjectType<unknown, GraphqlContext>({
  name: 'Query',
  fields: () => ({
    mlflowGetExperiment: rootField(
      response('MlflowGetExperimentResponse', () => ({ experiment: MlflowExperiment })),
      input('MlflowGetExperimentInput', { experimentId: GraphQLString }),
      ExperimentRef,
      async (m, { deps }) => ({ experiment: await getExperiment(deps.db, m.experiment_id) }),
    ),
    mlflowGetMetricHistoryBulkInterval: rootField(
      response('MlflowGetMetricHistoryBulkIntervalResponse', () => ({
        metrics: listOf(
          object('MlflowMetricWithRunId', () => ({
            key: GraphQLString,
            value: { type: GraphQLFloat, resolve: metricValue },
            timestamp: LongString,
            step: LongString,
            runId: GraphQLString,
          })),
        ),
      })),
      input('MlflowGetMetricHistoryBulkIntervalInput', {
        runIds: new GraphQLList(GraphQLString),
        metricKey: GraphQLString,
        startStep: GraphQLInt,
        endStep: GraphQLInt,
        maxResults: GraphQLInt,
      }),
      MetricHistoryBulkInterval,
      async (m, { deps }) =>
        metricHistoryBulkInterval(deps.db, {
          runIds: m.run_ids,
          key: m.metric_key,
          maxResults: m.max_results,
          startStep: m.start_step,
          endStep: m.end_step,
        }),
    ),
    mlflowGetRun: rootField(
      response('MlflowGetRunResponse', () => ({ run: MlflowRunExtension })),
      input('MlflowGetRunInput', { runId: GraphQLString, runUuid: GraphQLString }),
      RunRef,
      async (runId, { deps }) => ({ run: await getRun(deps.db, runId) }),
    ),
    mlflowListArtifacts: rootField(
      response('MlflowListArtifactsResponse', () => ({
        rootUri: GraphQLString,
        files: listOf(object('MlflowFileInfo', () => ({ path: GraphQLString, isDir: GraphQLBoolean, fileSize: LongString }))),
        nextPageToken: GraphQLString,
      })),
      input('MlflowListArtifactsInput', { runId: GraphQLString, runUuid: GraphQLString, path: GraphQLString, pageToken: GraphQLString }),
      ListArtifacts,
      async (m, { deps }) => listRunArtifacts(deps, m),
    ),
    mlflowSearchModelVersions: rootField(
      response('MlflowSearchModelVersionsResponse', () => ({ modelVersions: listOf(MlflowModelVersion), nextPageToken: GraphQLString })),
      input('MlflowSearchModelVersionsInput', {
        filter: GraphQLString,
        maxResults: LongString,
        orderBy: new GraphQLList(GraphQLString),
        pageToken: GraphQLString,
      }),
      SearchRegistry,
      async (m, { deps }) => {
        const page = await searchModelVersions(deps.db, {
          filter: m.filter,
          maxResults: m.max_results ?? 10_000,
          orderBy: m.order_by,
          pageToken: m.page_token,
        });
        const modelVersions = await loadModelVersions(
          deps.db,
          page.versions.map((v) => ({ name: v.name, version: Number(v.version) })),
        );
        return { model_versions: modelVersions, next_page_token: page.nextPageToken };
      },
    ),
    mlflowSearchRuns: searchRunsField,
    test: echo('Test'),
  }),
});

const Mutation = new GraphQLObjectType<unknown, GraphqlContext>({
  name: 'Mutation',
  fields: () => ({
    mlflowSearchDatasets: rootField(
      response('MlflowSearchDatasetsResponse', () => ({
        datasetSummaries: listOf(
          object('MlflowDatasetSummary', () => ({
            experimentId: GraphQLString,
            name: GraphQLString,
            digest: GraphQLString,
            context: GraphQLString,
          })),
        ),
      })),
      input('MlflowSearchDatasetsInput', { experimentIds: new GraphQLList(GraphQLString) }),
      SearchDatasets,
      async (m, { deps }) => ({
        dataset_summaries: await searchDatasets(
          deps.db,
          m.experiment_ids.map((id) => experimentIdOf(id)),
        ),
      }),
    ),
    mlflowSearchRuns: searchRunsField,
    testMutation: echo('TestMutation'),
  }),
});

/** Databricks' component identifier, which MLflow's UI puts on its queries. */
const component = new GraphQLDirective({
  name: 'component',
  locations: [DirectiveLocation.QUERY, DirectiveLocation.MUTATION],
  args: { name: { type: new GraphQLNonNull(GraphQLString) } },
});

export const trackerSchema = new GraphQLSchema({ query: Query, mutation: Mutation, directives: [...specifiedDirectives, component] });
