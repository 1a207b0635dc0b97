import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import type { ExploreDeps } from '../deps.ts';
import { measureQuery } from '../metrics.ts';
import { askQuestion } from '../questions.ts';

const queryBody = z.object({
  question: z.string().trim().min(1, 'question must not be empty').max(4000),
  session_id: z.string().trim().min(1).max(200).optional(),
  execute: z.boolean().default(true),
  confirm_cost: z.boolean().default(false),
  force: z.boolean().default(false),
  persist: z.boolean().default(true),
  model: z.string().trim().min(1).max(200).optional(),
});

export function queryRoutes(deps: ExploreDeps) {
  return new Hono<AppEnv>().post('/query', validate('json', queryBody), async (c) =>
    c.json(
      await measureQuery(deps.metrics, () =>
        askQuestion(deps, { caller: c.var.caller, request: c.req.valid('json'), requestId: c.var.requestId, log: c.var.log }),
      ),
    ),
  );
}
