import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, filledText, jsonBody, problems } from '../../platform/openapi/index.ts';
import { createAnswers } from '../answer/index.ts';
import { streamAnswer, wantsStream } from '../answer/stream.ts';
import type { RetrievalDeps } from '../deps.ts';
import { chunk, citation, filterSchema, slugParam, topK } from './schemas.ts';

const answerBody = (maxTopK: number) =>
  z.object({
    question: filledText(8000, 'question must not be empty'),
    top_k: topK(maxTopK),
    session_id: filledText(200, 'session_id must not be empty').optional(),
    filter: filterSchema,
    stream: z
      .boolean({ message: 'stream must be true or false' })
      .optional()
      .describe('Answer as Server-Sent Events; when absent, an Accept header asking for text/event-stream decides'),
  });

const usage = z.object({ prompt_tokens: z.int(), completion_tokens: z.int() }).nullable();
const answerResponse = z.object({
  answer: z.string(),
  citations: z.array(citation),
  chunks: z.array(chunk).describe('The chunks given as context: marker n is chunks[n - 1]'),
  grounded: z.boolean(),
  model: z.string().nullable().describe('The model that answered; null when none was asked (no context)'),
  session_id: z.string().nullable(),
  audit_id: z.int().describe('The audit record of the answer (GET /audit/queries), which its feedback names'),
  standalone_question: z.string().nullable().describe('The follow-up rewritten from the session, as it was retrieved for'),
  latency_ms: z.number(),
  usage,
});

const event = z
  .object({
    event: z.enum(['retrieval', 'delta', 'citations', 'done', 'error']),
    data: z
      .string()
      .describe(
        'JSON: retrieval {chunks}; delta {text}; citations {citations}; done {grounded, model, session_id, audit_id, ' +
          'standalone_question, latency_ms, usage}; error: the problem (type, title, status, detail, requestId)',
      ),
  })
  .describe(
    'One Server-Sent Event. They come in order: retrieval, delta (repeated), citations, done; a failure after the first ' +
      'event is an error event instead of the rest.',
  );

const answer = (maxTopK: number) =>
  createRoute({
    method: 'post',
    path: '/{slug}/answer',
    summary: 'An answer to the question from the collection, with its citations; recorded like a query',
    request: { params: slugParam, body: jsonBody(answerBody(maxTopK)) },
    responses: {
      200: {
        description: 'The answer, whole (JSON) or as it is written (event stream); a refusal is a problem before any event',
        content: { 'application/json': { schema: answerResponse }, 'text/event-stream': { schema: event } },
      },
      ...problems(400, 401, 403, 404, 413, 415, 422, 429, 502, 503, 504),
    },
  });

export function answerRoutes(deps: RetrievalDeps) {
  const answers = createAnswers(deps);
  return apiRoutes().openapi(answer(deps.config.MAX_TOP_K), async (c) => {
    const { stream, ...input } = c.req.valid('json');
    // whatever refuses the request (policy, limits, top_k) answers as problem+json before any event
    const prepared = await answers.prepare(c.var.caller, c.req.valid('param').slug, input, c.var.requestId);
    if (wantsStream(c, stream)) return streamAnswer(c, answers, prepared);
    return c.json(await answers.finish(prepared, { signal: c.req.raw.signal }), 200);
  });
}
