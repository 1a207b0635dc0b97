import { assertValidSchema, type DocumentNode, execute, GraphQLError, parse, validate } from 'graphql';
import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { TrackerError } from '../errors.ts';
import { readRequest } from '../wire/request.ts';
import { graphqlContext } from './context.ts';
import { checkQueryText, MAX_QUERY_CHARS, MAX_TOKENS, QueryShapeRule } from './limits.ts';
import { protoField } from './fields.ts';
import { trackerSchema } from './schema.ts';

const GraphqlRequest = z.object({
  query: z.string(),
  operationName: z.string().nullish(),
  variables: z.record(z.string(), z.unknown()).nullish(),
});

type Answer = { data: Record<string, unknown> | null; errors: string[] | null };

/**
 * graphql-js quotes names with double quotes where graphql-core, which MLflow's server runs, uses single ones:
 * `Cannot query field 'x' on type 'Query'.` Only a quoted name or punctuator is requoted, never a value.
 */
const inMlflowWords = (message: string) => message.replace(/"(\$?[_A-Za-z][_0-9A-Za-z]*|\.\.\.|[!$&():=@[\]{|}])"/g, "'$1'");

// graphql-js meters its own pairwise comparisons of fields and fragments and gives up past a budget, in two words
const ABORTED = 'Validation aborted.';
const TOO_COSTLY = 'Query is too costly to validate: it repeats one field name or spreads fragments side by side too often at one level';

const refused = (errors: readonly GraphQLError[]): Answer => ({ data: null, errors: errors.map((e) => inMlflowWords(e.message)) });

/**
 * Runs a query as MLflow's endpoint does: MLflow's limits first, alone (svc's rule counts them through fragments
 * without expanding any), then the standard validation, then execution. The limits bound everything after them.
 */
async function answer(deps: TrackerDeps, m: z.output<typeof GraphqlRequest>): Promise<Answer> {
  let document: DocumentNode;
  try {
    checkQueryText(m.query);
    document = parse(m.query, { maxLexicalTokens: MAX_TOKENS, maxSourceLength: MAX_QUERY_CHARS });
  } catch (err) {
    if (err instanceof GraphQLError) return refused([err]);
    throw err;
  }
  const overLimits = validate(trackerSchema, document, [QueryShapeRule]);
  if (overLimits.length) return refused(overLimits);
  const invalid = validate(trackerSchema, document);
  if (invalid.length) return refused(invalid.map((e) => (e.message === ABORTED ? new GraphQLError(TOO_COSTLY) : e)));
  const result = await execute({
    schema: trackerSchema,
    document,
    operationName: m.operationName,
    variableValues: m.variables,
    contextValue: graphqlContext(deps),
    fieldResolver: protoField,
  });
  // A field that failed for a reason not the request's (the database, a bug) is the tracker's error answer, as on
  // every other endpoint (a 500 says only "internal error"); a field's TrackerError is an error of the answer.
  const failure = result.errors
    ?.filter((e) => e.path)
    .map((e) => e.originalError)
    .find((e) => e && !(e instanceof GraphQLError) && !(e instanceof TrackerError));
  if (failure) throw failure;
  return {
    data: (result.data as Record<string, unknown> | null | undefined) ?? null,
    errors: result.errors ? refused(result.errors).errors : null,
  };
}

/**
 * POST /graphql (and /ajax-api/graphql, where MLflow's UI posts): `{data, errors}` with status 200, errors as
 * strings, as MLflow answers; a query over the limits or one that does not parse runs nothing.
 */
export function graphqlRoutes(deps: TrackerDeps): Hono<AppEnv> {
  assertValidSchema(trackerSchema); // at start, not on the first query
  const handler = new Hono<AppEnv>().post('/', async (c) => c.json(await answer(deps, await readRequest(c, GraphqlRequest))));
  return new Hono<AppEnv>().route('/graphql', handler).route('/ajax-api/graphql', handler);
}
