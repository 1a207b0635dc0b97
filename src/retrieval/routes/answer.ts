import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import { createAnswers } from '../answer/index.ts';
import { streamAnswer, wantsStream } from '../answer/stream.ts';
import type { RetrievalDeps } from '../deps.ts';
import { slugSchema } from './collections.ts';

const slugParam = z.object({ slug: slugSchema });
const answerBody = z.object({
  question: z.string().trim().min(1, 'question must not be empty').max(8000),
  top_k: z.number().int('top_k must be an integer').min(1, 'top_k must be at least 1').optional(),
  session_id: z.string().trim().min(1, 'session_id must not be empty').max(200).optional(),
  stream: z.boolean({ message: 'stream must be true or false' }).optional(),
});

export function answerRoutes(deps: RetrievalDeps) {
  const answers = createAnswers(deps);
  return new Hono<AppEnv>().post('/:slug/answer', validate('param', slugParam), validate('json', answerBody), async (c) => {
    const { stream, ...input } = c.req.valid('json');
    // whatever refuses the request (policy, limits, top_k) answers as problem+json before any event
    const prepared = await answers.prepare(c.var.caller, c.req.valid('param').slug, input);
    if (wantsStream(c, stream)) return streamAnswer(c, answers, prepared);
    return c.json(await answers.finish(prepared, { signal: c.req.raw.signal }));
  });
}
