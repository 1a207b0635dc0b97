import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import type { ExploreDeps } from '../deps.ts';
import type { Trail } from '../events.ts';
import { runQuery, type QueryResponse } from '../pipeline.ts';
import { recordQuestion } from '../questions.ts';

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
  return new Hono<AppEnv>().post('/query', validate('json', queryBody), async (c) => {
    const started = performance.now();
    let outcome = 'error';
    const question = { caller: c.var.caller, request: c.req.valid('json'), requestId: c.var.requestId, trail: [] as Trail };
    try {
      let answer: QueryResponse;
      try {
        answer = await runQuery(deps, question.caller, question.request, { requestId: c.var.requestId, log: c.var.log, trail: question.trail });
      } catch (err) {
        // The refusal is what the caller gets, recorded or not; a failure to record it goes to the log.
        await recordQuestion(deps.db, { ...question, error: err }).catch((e: unknown) => c.var.log.error({ err: e }, 'could not record a refused question'));
        throw err;
      }
      // An answer that cannot be recorded is not given: that failure is the 500.
      await recordQuestion(deps.db, { ...question, answer });
      outcome = answer.cached ? 'cached' : 'ok';
      return c.json(answer);
    } catch (err) {
      outcome = typeof (err as { status?: number }).status === 'number' ? `http_${(err as { status: number }).status}` : 'error';
      throw err;
    } finally {
      deps.metrics.queries.inc({ outcome });
      deps.metrics.queryDuration.observe((performance.now() - started) / 1000);
    }
  });
}
