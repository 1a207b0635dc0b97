import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { readRequest } from '../wire/request.ts';
import { checkShape, execute, QueryRefused } from './execute.ts';
import { GraphqlSyntaxError, parseDocument } from './parse.ts';

const GraphqlRequest = z.object({
  query: z.string(),
  operationName: z.string().nullish(),
  variables: z.record(z.string(), z.unknown()).nullish(),
});

/**
 * POST /graphql (and /ajax-api/graphql, where MLflow's UI posts): `{data, errors}` with status 200, errors as
 * strings, as MLflow answers; a query over MLflow's limits or one that does not parse runs nothing.
 */
export function graphqlRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const handler = new Hono<AppEnv>().post('/', async (c) => {
    const m = await readRequest(c, GraphqlRequest);
    try {
      const doc = parseDocument(m.query);
      checkShape(doc);
      return c.json(await execute(deps, doc, m.operationName ?? undefined, m.variables ?? {}));
    } catch (err) {
      if (err instanceof GraphqlSyntaxError || err instanceof QueryRefused) return c.json({ data: null, errors: [err.message] });
      throw err;
    }
  });
  return new Hono<AppEnv>().route('/graphql', handler).route('/ajax-api/graphql', handler);
}
