import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, filledText, jsonBody, jsonResponse as json, problems } from '../../platform/openapi/index.ts';
import type { RetrievalDeps } from '../deps.ts';
import { QUERY_MODES, queryCollection } from '../query.ts';
import { chunk, filterSchema, slugParam, topK } from './schemas.ts';

const queryBody = (maxTopK: number) =>
  z.object({
    question: filledText(8000, 'question must not be empty'),
    top_k: topK(maxTopK),
    mode: z.enum(QUERY_MODES, { message: 'mode must be one of hybrid, dense, keyword' }).optional().describe('Default hybrid'),
    filter: filterSchema,
  });

const queryResponse = z.object({
  question: z.string(),
  collection: z.string(),
  chunks: z.array(chunk).describe('At most top_k, highest score first'),
  exact: z
    .boolean()
    .describe("False where an approximate index made the dense ranking (a search-backend collection's k-NN); true otherwise"),
  latency_ms: z.number(),
});

const query = (maxTopK: number) =>
  createRoute({
    method: 'post',
    path: '/{slug}/query',
    summary: "The collection's chunks closest to the question, highest score first; the retrieval is recorded",
    request: { params: slugParam, body: jsonBody(queryBody(maxTopK)) },
    responses: { 200: json(queryResponse, 'The ranked chunks'), ...problems(400, 401, 403, 404, 413, 415, 422, 502, 503, 504) },
  });

export function queryRoutes(deps: RetrievalDeps) {
  return apiRoutes().openapi(query(deps.config.MAX_TOP_K), async (c) =>
    c.json(await queryCollection(deps, c.var.caller, c.req.valid('param').slug, c.req.valid('json'), c.var.requestId), 200),
  );
}
