import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, jsonBody, problems } from '../../platform/openapi/index.ts';
import { createAnswers } from '../answer/index.ts';
import { streamAnswer, wantsStream } from '../answer/stream.ts';
import type { RetrievalDeps } from '../deps.ts';
import { chunk, slugParam } from './schemas.ts';

const answerBody = z.object({
  question: z.string().trim().min(1, 'question must not be empty').max(8000),
  top_k: z.number().int('top_k must be an integer').min(1, 'top_k must be at least 1').optional(),
  session_id: z.string().trim().min(1, 'session_id must not be empty').max(200).optional(),
  stream: z
    .boolean({ message: 'stream must be true or false' })
    .optional()
    .describe('Answer as Server-Sent Events; when absent, an Accept header asking for text/event-stream decides'),
});

const usage = z.object({ prompt_tokens: z.int(), completion_tokens: z.int() }).nullable();
const answerResponse = z.object({
  answer: z.string(),
  citations: z.array(
    z.object({
      marker: z.int(),
      chunk_id: z.string(),
      document_id: z.string(),
      filename: z.string(),
      page: z.int(),
      score: z.number(),
      quote: z.string().describe("The cited chunk's sentence closest to the claim the marker follows"),
    }),
  ),
  chunks: z.array(chunk).describe('The chunks given as context: marker n is chunks[n - 1]'),
  grounded: z.boolean(),
  model: z.string().nullable().describe('The model that answered; null when none was asked (no context)'),
  session_id: z.string().nullable(),
  audit_id: z.int().describe('The answer’s audit record (GET /audit/queries), which its feedback names'),
  standalone_question: z.string().nullable().describe('The follow-up rewritten from the session, as it was retrieved for'),
  latency_ms: z.number(),
  usage,
});

const events = z
  .string()
  .describe(
    'Server-Sent Events, in order: `retrieval` {chunks}, `delta` {text} (repeated), `citations` {citations}, `done` ' +
      '{grounded, model, session_id, audit_id, standalone_question, latency_ms, usage}; a failure after the first event ' +
      'is an `error` event carrying the problem (application/problem+json fields) instead of the rest.',
  );

const answer = createRoute({
  method: 'post',
  path: '/{slug}/answer',
  summary: 'An answer to the question from the collection, with its citations; recorded like a query',
  request: { params: slugParam, body: jsonBody(answerBody) },
  responses: {
    200: {
      description: 'The answer, whole (JSON) or as it is written (event stream); a refusal is a problem before any event',
      content: { 'application/json': { schema: answerResponse }, 'text/event-stream': { schema: events } },
    },
    ...problems(400, 401, 403, 404, 413, 415, 422, 429, 502, 503),
  },
});

export function answerRoutes(deps: RetrievalDeps) {
  const answers = createAnswers(deps);
  return apiRoutes().openapi(answer, async (c) => {
    const { stream, ...input } = c.req.valid('json');
    // whatever refuses the request (policy, limits, top_k) answers as problem+json before any event
    const prepared = await answers.prepare(c.var.caller, c.req.valid('param').slug, input);
    if (wantsStream(c, stream)) return streamAnswer(c, answers, prepared);
    return c.json(await answers.finish(prepared, { signal: c.req.raw.signal }), 200);
  });
}
