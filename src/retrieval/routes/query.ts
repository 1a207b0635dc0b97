import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import type { RetrievalDeps } from '../deps.ts';
import { QUERY_MODES, queryCollection } from '../query.ts';
import { slugSchema } from './collections.ts';

const slugParam = z.object({ slug: slugSchema });
const queryBody = z.object({
  question: z.string().trim().min(1, 'question must not be empty').max(8000),
  top_k: z.number().int('top_k must be an integer').min(1, 'top_k must be at least 1').optional(),
  mode: z.enum(QUERY_MODES, { message: 'mode must be one of hybrid, dense, keyword' }).optional(),
});

export function queryRoutes(deps: RetrievalDeps) {
  return new Hono<AppEnv>().post('/:slug/query', validate('param', slugParam), validate('json', queryBody), async (c) =>
    c.json(await queryCollection(deps, c.var.caller, c.req.valid('param').slug, c.req.valid('json'))),
  );
}
