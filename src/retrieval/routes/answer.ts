import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import { createAnswers } from '../answer/index.ts';
import type { RetrievalDeps } from '../deps.ts';
import { slugSchema } from './collections.ts';

const slugParam = z.object({ slug: slugSchema });
const answerBody = z.object({
  question: z.string().trim().min(1, 'question must not be empty').max(8000),
  top_k: z.number().int('top_k must be an integer').min(1, 'top_k must be at least 1').optional(),
  session_id: z.string().trim().min(1, 'session_id must not be empty').max(200).optional(),
  stream: z.boolean().optional(),
});

export function answerRoutes(deps: RetrievalDeps) {
  const answers = createAnswers(deps);
  return new Hono<AppEnv>().post('/:slug/answer', validate('param', slugParam), validate('json', answerBody), async (c) =>
    c.json(await answers.answer(c.var.caller, c.req.valid('param').slug, c.req.valid('json'))),
  );
}
