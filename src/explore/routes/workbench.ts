import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, filledText, jsonBody, jsonResponse as json, problems, storableText } from '../../platform/openapi/index.ts';
import type { ExploreDeps } from '../deps.ts';
import { listHistory } from '../history.ts';
import { deleteSavedOf, listSavedOf, saveQuestion } from '../saved.ts';
import { MAX_SQL_LENGTH } from '../sql/statement.ts';

// The analyst's workbench beside POST /query: the caller's own history and saved questions.

const historyItem = z.object({
  id: z.int().describe("The record's place in the audit chain: the next page's `before`"),
  source: z.enum(['question', 'sql']),
  question: z.string().nullable(),
  sql: z.string().nullable().describe('The statement that ran, or was refused; null when none was written'),
  outcome: z.enum(['answered', 'cached', 'refused', 'failed']),
  status: z.int(),
  row_count: z.int().nullable(),
  dashboard_id: z.string().nullable(),
  created_at: z.iso.datetime(),
});

const history = createRoute({
  method: 'get',
  path: '/history',
  summary: "The caller's own questions and statement runs, newest first, a page at a time",
  request: {
    query: z.object({
      limit: z.coerce.number().int().min(1).max(200).default(50),
      before: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().describe("A previous page's next_before"),
    }),
  },
  responses: {
    200: json(
      z.object({ history: z.array(historyItem), next_before: z.int().nullable().describe('null on the last page') }),
      'The history',
    ),
    ...problems(400, 401, 503),
  },
});

/** The chart a saved question keeps for the console: opaque to the service beyond this shape. */
const chart = z.object({
  type: z.enum(['bar', 'line', 'scatter', 'table']),
  x: storableText().max(200).optional(),
  y: storableText().max(200).optional(),
});
const savedBody = z.object({
  title: filledText(200, 'title must not be empty'),
  question: filledText(4000, 'question must not be empty').optional(),
  sql: filledText(MAX_SQL_LENGTH, 'sql must not be empty'),
  chart: chart.optional(),
});
const saved = z.object({
  id: z.string(),
  owner: z.string(),
  title: z.string(),
  question: z.string().nullable(),
  sql: z.string(),
  chart: chart.nullable(),
  created_at: z.iso.datetime(),
});

const save = createRoute({
  method: 'post',
  path: '/saved',
  summary: 'Save a question: a title, its SQL, the question it came from and a chart',
  request: { body: jsonBody(savedBody) },
  responses: { 201: json(saved, 'Saved'), ...problems(400, 401, 409, 413, 415, 503) },
});

const list = createRoute({
  method: 'get',
  path: '/saved',
  summary: "The caller's own saved questions, newest first",
  responses: { 200: json(z.object({ saved: z.array(saved) }), 'The saved questions'), ...problems(401, 503) },
});

const remove = createRoute({
  method: 'delete',
  path: '/saved/{id}',
  summary: "Delete one of the caller's saved questions; anyone else's is 404",
  request: { params: z.object({ id: storableText().min(1).max(100) }) },
  responses: { 200: json(z.object({ deleted: z.string() }), 'Deleted'), ...problems(400, 401, 404, 503) },
});

export function workbenchRoutes(deps: ExploreDeps) {
  return apiRoutes()
    .openapi(history, async (c) => c.json(await listHistory(deps.db, c.var.caller, c.req.valid('query')), 200))
    .openapi(save, async (c) => c.json(await saveQuestion(deps.db, c.var.caller, c.req.valid('json')), 201))
    .openapi(list, async (c) => c.json({ saved: await listSavedOf(deps.db, c.var.caller) }, 200))
    .openapi(remove, async (c) => c.json(await deleteSavedOf(deps.db, c.var.caller, c.req.valid('param').id), 200));
}
