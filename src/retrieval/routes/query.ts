import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, jsonBody, jsonResponse as json, problems } from '../../platform/openapi/index.ts';
import type { RetrievalDeps } from '../deps.ts';
import { QUERY_MODES, queryCollection } from '../query.ts';
import { chunk, slugParam } from './schemas.ts';

const queryBody = z.object({
  question: z.string().trim().min(1, 'question must not be empty').max(8000),
  top_k: z
    .number()
    .int('top_k must be an integer')
    .min(1, 'top_k must be at least 1')
    .optional()
    .describe('Default SVC_DEFAULT_TOP_K (5); above SVC_MAX_TOP_K (50) is a 400'),
  mode: z.enum(QUERY_MODES, { message: 'mode must be one of hybrid, dense, keyword' }).optional().describe('Default hybrid'),
});

const queryResponse = z.object({
  question: z.string(),
  collection: z.string(),
  chunks: z.array(chunk).describe('At most top_k, highest score first'),
  latency_ms: z.number(),
});

const query = createRoute({
  method: 'post',
  path: '/{slug}/query',
  summary: "The collection's chunks closest to the question, highest score first; the retrieval is recorded",
  request: { params: slugParam, body: jsonBody(queryBody) },
  responses: { 200: json(queryResponse, 'The ranked chunks'), ...problems(400, 401, 403, 404, 413, 415, 422, 502, 503) },
});

export function queryRoutes(deps: RetrievalDeps) {
  return apiRoutes().openapi(query, async (c) =>
    c.json(await queryCollection(deps, c.var.caller, c.req.valid('param').slug, c.req.valid('json')), 200),
  );
}
