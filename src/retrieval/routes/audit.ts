import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import { listRetrievals } from '../audit.ts';
import type { RetrievalDeps } from '../deps.ts';

const auditQuery = z.object({
  limit: z.coerce
    .number()
    .int('limit must be an integer')
    .min(1, 'limit must be at least 1')
    .max(1000, 'limit must be at most 1000')
    .default(50),
});

export function auditRoutes(deps: RetrievalDeps) {
  return new Hono<AppEnv>().get('/queries', validate('query', auditQuery), async (c) =>
    c.json({ queries: await listRetrievals(deps, c.var.caller, c.req.valid('query').limit) }),
  );
}
