import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import { listRetrievals } from '../audit.ts';
import type { RetrievalDeps } from '../deps.ts';
import { rateAnswer } from '../feedback.ts';

const auditQuery = z.object({
  limit: z.coerce
    .number()
    .int('limit must be an integer')
    .min(1, 'limit must be at least 1')
    .max(1000, 'limit must be at most 1000')
    .default(50),
});

const idParam = z.object({
  id: z.coerce.number({ message: 'id must be a number' }).int('id must be an integer').min(1, 'id must be at least 1'),
});
const feedbackBody = z.object({
  rating: z.enum(['up', 'down'], { message: 'rating must be up or down' }),
  comment: z.string().max(2000, 'comment must be at most 2000 characters').optional(),
});

export function auditRoutes(deps: RetrievalDeps) {
  return (
    new Hono<AppEnv>()
      .get('/queries', validate('query', auditQuery), async (c) =>
        c.json({ queries: await listRetrievals(deps, c.var.caller, c.req.valid('query').limit) }),
      )
      // thumbs up or down on an answer, by its asker
      .post('/queries/:id/feedback', validate('param', idParam), validate('json', feedbackBody), async (c) =>
        c.json(await rateAnswer(deps, c.var.caller, c.req.valid('param').id, c.req.valid('json')), 201),
      )
  );
}
