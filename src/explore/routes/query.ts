import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, filledText, jsonBody, jsonResponse as json, problems } from '../../platform/openapi/index.ts';
import { chartSpec } from '../dashboards/chart.ts';
import { MAX_SQL_LENGTH } from '../sql/statement.ts';
import { toCsv } from '../csv.ts';
import type { ExploreDeps } from '../deps.ts';
import { measureQuery } from '../metrics.ts';
import { askQuestion, exportRows } from '../questions.ts';

const ONE_OF = 'send exactly one of question (in plain language) and sql (a statement to run as written)';
const queryBody = z
  .object({
    question: filledText(4000, 'question must not be empty').optional(),
    sql: filledText(MAX_SQL_LENGTH, 'sql must not be empty')
      .optional()
      .describe('A statement to run instead of a question: it skips catalog search and generation, and nothing else'),
    session_id: filledText(200, 'session_id must not be empty').optional(),
    execute: z.boolean().default(true),
    confirm_cost: z.boolean().default(false),
    force: z.boolean().default(false),
    persist: z.boolean().default(true),
    model: filledText(200, 'model must not be empty').optional(),
    chart: chartSpec.optional().describe("The dashboard's chart; proposed from the result's columns when absent"),
  })
  .superRefine((body, ctx) => {
    if ((body.question === undefined) === (body.sql === undefined))
      ctx.addIssue({ code: 'custom', path: body.question === undefined ? ['question'] : ['sql'], message: ONE_OF });
  })
  .describe(`A question or a statement: ${ONE_OF}`);

const column = z.object({ name: z.string(), type: z.string() });
const queryAnswer = z.object({
  sql: z.string().describe('The canonical statement that ran'),
  columns: z.array(column),
  preview_rows: z.array(z.array(z.unknown())),
  row_count: z.int(),
  dashboard_url: z.string().nullable(),
  dashboard_id: z.string().nullable(),
  reasoning: z.object({
    intent: z.string().describe("What was understood; 'edited SQL' for a statement sent as sql"),
    candidate_tables: z.array(z.string()),
    allowed_tables: z.array(z.string()),
    tables_used: z.array(z.string()),
  }),
  masked_columns: z.array(z.string()),
  cost_bytes: z.number().nullable(),
  cached: z.boolean(),
  session_history_size: z.int(),
  model: z.string().describe('The model that wrote the statement; empty for a statement sent as sql'),
});

const ask = createRoute({
  method: 'post',
  path: '/query',
  summary: 'Answer a question, or run a statement, with validated read-only SQL, its rows, and a published dashboard',
  request: { body: jsonBody(queryBody) },
  responses: {
    200: json(queryAnswer, 'The statement, its first rows (personal columns masked) and the dashboard'),
    ...problems(400, 401, 403, 413, 415, 422, 429, 502, 503, 504),
  },
});

const csv = createRoute({
  method: 'post',
  path: '/query/csv',
  summary: 'The whole result (up to SVC_SQL_AUTO_LIMIT rows) as CSV, redacted as /query shows it; nothing is published or cached',
  request: { body: jsonBody(queryBody) },
  responses: {
    200: {
      description: 'The result as a CSV attachment: a header row, then the rows (personal columns masked)',
      content: { 'text/csv': { schema: z.string() } },
    },
    ...problems(400, 401, 403, 413, 415, 422, 429, 502, 503, 504),
  },
});

export function queryRoutes(deps: ExploreDeps) {
  return apiRoutes()
    .openapi(ask, async (c) =>
      c.json(
        await measureQuery(deps.metrics, () =>
          askQuestion(deps, { caller: c.var.caller, request: c.req.valid('json'), requestId: c.var.requestId, log: c.var.log }),
        ),
        200,
      ),
    )
    .openapi(csv, async (c) => {
      const result = await exportRows(deps, {
        caller: c.var.caller,
        request: c.req.valid('json'),
        requestId: c.var.requestId,
        log: c.var.log,
      });
      return c.body(toCsv(result.columns, result.rows), 200, {
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': 'attachment; filename="explore-result.csv"',
      });
    });
}
