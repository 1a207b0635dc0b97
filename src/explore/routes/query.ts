import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, filledText, jsonBody, jsonResponse as json, problems } from '../../platform/openapi/index.ts';
import { chartSpec } from '../dashboards/chart.ts';
import type { ExploreDeps } from '../deps.ts';
import { measureQuery } from '../metrics.ts';
import { askQuestion } from '../questions.ts';

const queryBody = z.object({
  question: filledText(4000, 'question must not be empty'),
  session_id: filledText(200, 'session_id must not be empty').optional(),
  execute: z.boolean().default(true),
  confirm_cost: z.boolean().default(false),
  force: z.boolean().default(false),
  persist: z.boolean().default(true),
  model: filledText(200, 'model must not be empty').optional(),
  chart: chartSpec.optional().describe("The dashboard's chart; proposed from the result's columns when absent"),
});

const column = z.object({ name: z.string(), type: z.string() });
const queryAnswer = z.object({
  sql: z.string().describe('The canonical statement that ran'),
  columns: z.array(column),
  preview_rows: z.array(z.array(z.unknown())),
  row_count: z.int(),
  dashboard_url: z.string().nullable(),
  dashboard_id: z.string().nullable(),
  reasoning: z.object({
    intent: z.string(),
    candidate_tables: z.array(z.string()),
    allowed_tables: z.array(z.string()),
    tables_used: z.array(z.string()),
  }),
  masked_columns: z.array(z.string()),
  cost_bytes: z.number().nullable(),
  cached: z.boolean(),
  session_history_size: z.int(),
  model: z.string(),
});

const ask = createRoute({
  method: 'post',
  path: '/query',
  summary: 'Answer a question with a validated read-only SQL statement, its rows, and a published dashboard',
  request: { body: jsonBody(queryBody) },
  responses: {
    200: json(queryAnswer, 'The statement, its first rows (personal columns masked) and the dashboard'),
    ...problems(400, 401, 403, 413, 415, 422, 429, 502, 503, 504),
  },
});

export function queryRoutes(deps: ExploreDeps) {
  return apiRoutes().openapi(ask, async (c) =>
    c.json(
      await measureQuery(deps.metrics, () =>
        askQuestion(deps, { caller: c.var.caller, request: c.req.valid('json'), requestId: c.var.requestId, log: c.var.log }),
      ),
      200,
    ),
  );
}
