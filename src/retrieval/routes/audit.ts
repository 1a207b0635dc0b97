import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, jsonBody, jsonResponse as json, problems, storableText } from '../../platform/openapi/index.ts';
import { listRetrievals } from '../audit.ts';
import type { RetrievalDeps } from '../deps.ts';
import { rateAnswer } from '../feedback.ts';
import { auditedFilterSchema, positiveInt } from './schemas.ts';

const auditQuery = z.object({
  limit: z.coerce
    .number()
    .int('limit must be an integer')
    .min(1, 'limit must be at least 1')
    .max(1000, 'limit must be at most 1000')
    .default(50),
});

const idParam = z.object({ id: positiveInt('id') });
const feedbackBody = z.object({
  rating: z.enum(['up', 'down'], { message: 'rating must be up or down' }),
  comment: storableText().max(2000, 'comment must be at most 2000 characters').optional(),
});

const rating = z.enum(['up', 'down']);
const retrieval = z.object({
  id: z.int(),
  at: z.iso.datetime(),
  user: z.string(),
  roles: z.array(z.string()),
  collection: z.string(),
  question: z.string(),
  top_k: z.int(),
  chunks: z.array(z.object({ chunk_id: z.string(), score: z.number() })),
  latency_ms: z.number(),
  filter: auditedFilterSchema.optional().describe('The filter the retrieval was narrowed by'),
  answer: z
    .object({
      outcome: z.enum(['answered', 'no_context', 'model_failed', 'cancelled']),
      model: z.string(),
      text: z.string().nullable(),
      citations: z.array(z.object({ marker: z.int(), chunk_id: z.string() })),
      session_id: z.string().nullable(),
      standalone_question: z.string().optional(),
      error: z.string().optional(),
      usage: z.object({ prompt_tokens: z.int(), completion_tokens: z.int() }).optional(),
    })
    .optional()
    .describe('What an answer gave, for a retrieval made to answer (POST /collections/{slug}/answer)'),
  feedback: z
    .object({ rating, comment: z.string(), at: z.iso.datetime() })
    .optional()
    .describe('The latest thumbs up or down its asker gave the answer'),
});

const queries = createRoute({
  method: 'get',
  path: '/queries',
  summary: "The most recent retrievals, newest first: everyone's for whom the collections policy allows it, else the caller's own",
  request: { query: auditQuery },
  responses: { 200: json(z.object({ queries: z.array(retrieval) }), 'The retrievals'), ...problems(400, 401, 503) },
});

const feedback = createRoute({
  method: 'post',
  path: '/queries/{id}/feedback',
  summary: 'Thumbs up or down on an answer, by its asker (the audit_id the answer came with)',
  request: { params: idParam, body: jsonBody(feedbackBody) },
  responses: {
    201: json(z.object({ query_id: z.int(), rating, comment: z.string(), at: z.iso.datetime() }), 'Recorded'),
    ...problems(400, 401, 404, 413, 415, 503),
  },
});

export function auditRoutes(deps: RetrievalDeps) {
  return apiRoutes()
    .openapi(queries, async (c) => c.json({ queries: await listRetrievals(deps, c.var.caller, c.req.valid('query').limit) }, 200))
    .openapi(feedback, async (c) => c.json(await rateAnswer(deps, c.var.caller, c.req.valid('param').id, c.req.valid('json')), 201));
}
