import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, filledText, jsonBody, jsonResponse as json, problems } from '../../platform/openapi/index.ts';
import type { RetrievalDeps } from '../deps.ts';
import { deleteSession, getSession, listSessions, renameSession } from '../sessions.ts';
import { citation } from './schemas.ts';

// The caller's chat history: the answer sessions they asked in (POST /collections/{slug}/answer with session_id).

const idParam = z.object({ id: filledText(200, 'id must not be empty').describe('The session_id the answers were asked with') });

const summary = {
  id: z.string(),
  title: z.string().describe('The name given with PATCH, else the first question'),
  collection: z.string().describe('The collection of its last answer'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime().describe('When its last answer was given'),
};
const session = z.object({ ...summary, turns: z.int().describe('Turns kept') });
const detail = z.object({
  ...summary,
  turns: z
    .array(
      z.object({
        question: z.string(),
        standalone_question: z.string().nullable().describe('The follow-up as rewritten and retrieved for; null when it stood alone'),
        answer: z.string(),
        citations: z.array(citation),
        collection: z.string(),
        asked_at: z.iso.datetime(),
      }),
    )
    .describe('Oldest first'),
});

const list = createRoute({
  method: 'get',
  path: '/',
  summary: "The caller's own answer sessions, most recently used first",
  responses: { 200: json(z.object({ sessions: z.array(session) }), 'The sessions'), ...problems(401, 503) },
});

const get = createRoute({
  method: 'get',
  path: '/{id}',
  summary: 'One of the caller’s sessions with its turns (another user’s is 404)',
  request: { params: idParam },
  responses: { 200: json(detail, 'The session'), ...problems(400, 401, 404, 503) },
});

const rename = createRoute({
  method: 'patch',
  path: '/{id}',
  summary: 'Rename one of the caller’s sessions',
  request: { params: idParam, body: jsonBody(z.object({ title: filledText(200, 'title must not be empty') }).strict()) },
  responses: { 200: json(session, 'The renamed session'), ...problems(400, 401, 404, 413, 415, 503) },
});

const remove = createRoute({
  method: 'delete',
  path: '/{id}',
  summary: 'Delete one of the caller’s sessions with its turns (the audit keeps its answers)',
  request: { params: idParam },
  responses: { 200: json(z.object({ deleted: z.string() }), 'Deleted'), ...problems(400, 401, 404, 503) },
});

export function sessionRoutes(deps: RetrievalDeps) {
  return apiRoutes()
    .openapi(list, async (c) => c.json({ sessions: await listSessions(deps, c.var.caller) }, 200))
    .openapi(get, async (c) => c.json(await getSession(deps, c.var.caller, c.req.valid('param').id), 200))
    .openapi(rename, async (c) => c.json(await renameSession(deps, c.var.caller, c.req.valid('param').id, c.req.valid('json').title), 200))
    .openapi(remove, async (c) => c.json(await deleteSession(deps, c.var.caller, c.req.valid('param').id), 200));
}
