import { createRoute, z } from '@hono/zod-openapi';
import { decideConsole } from '../../platform/policy/index.ts';
import { apiRoutes, jsonBody, jsonResponse as json, problems, storableText } from '../../platform/openapi/index.ts';
import { openToCaller, searchCatalog } from '../catalog.ts';
import { recordFeedback } from '../dashboards/feedback.ts';
import type { ExploreDeps } from '../deps.ts';
import { emit } from '../events.ts';
import * as store from '../store.ts';

const me = createRoute({
  method: 'get',
  path: '/me',
  summary: 'Who the caller is, and whether the console decision lets them use the console',
  responses: {
    200: json(z.object({ user: z.string(), roles: z.array(z.string()), groups: z.array(z.string()), console: z.boolean() }), 'The caller'),
    ...problems(401, 503),
  },
});

const models = createRoute({
  method: 'get',
  path: '/models',
  summary: "The language models the gateway offers (memoised 60 s); offline: 'offline-planner'",
  responses: {
    200: json(
      z.object({
        default: z.string(),
        models: z.array(z.string()),
        details: z.array(z.looseObject({ id: z.string(), owned_by: z.string().optional() })),
      }),
      'The models and the default',
    ),
    ...problems(401, 502, 503),
  },
});

const catalogEntry = z.object({
  fqn: z.string(),
  name: z.string(),
  description: z.string(),
  columns: z.array(z.object({ name: z.string(), type: z.string(), tags: z.array(z.string()) })),
});
const catalog = createRoute({
  method: 'get',
  path: '/catalog',
  summary: 'The tables the tables policy opens to the caller, searched by q; every one of them when nothing matches',
  request: { query: z.object({ q: storableText().max(500).default('') }) },
  responses: {
    200: json(
      z.object({ entries: z.array(catalogEntry), fallback: z.boolean().describe('Nothing matched q: entries are every table') }),
      'The matching tables',
    ),
    ...problems(400, 401, 503, 504),
  },
});

const session = createRoute({
  method: 'get',
  path: '/session/{session_id}',
  summary: "The caller's own turns of a session younger than SVC_SESSION_TTL, newest first",
  request: { params: z.object({ session_id: storableText().min(1).max(200) }) },
  responses: {
    200: json(
      z.object({
        session_id: z.string(),
        history: z.array(z.object({ question: z.string(), sql: z.string(), summary: z.string(), at: z.iso.datetime() })),
      }),
      'The turns',
    ),
    ...problems(400, 401),
  },
});

const feedbackBody = z.object({
  dashboard_id: storableText().min(1).max(100),
  rating: z.enum(['up', 'down'], { message: "rating is 'up' or 'down'" }),
  comment: storableText().max(2000).default(''),
});
const feedback = createRoute({
  method: 'post',
  path: '/feedback',
  summary: 'Rate a dashboard the caller may open',
  request: { body: jsonBody(feedbackBody) },
  responses: {
    201: json(z.object({ recorded: z.literal(true), dashboard_id: z.string(), rating: z.enum(['up', 'down']) }), 'Recorded'),
    ...problems(400, 401, 404, 413, 415),
  },
});

export function miscRoutes(deps: ExploreDeps) {
  return apiRoutes()
    .openapi(me, async (c) => {
      const { user, roles, groups } = c.var.caller;
      const console = await decideConsole(deps.policy, c.var.caller, 'explore');
      return c.json({ user, roles, groups, console: console.allow }, 200);
    })
    .openapi(models, async (c) => c.json(await deps.models.list(), 200))
    .openapi(catalog, async (c) => {
      // only the tables the caller may read, and their tags: the catalog says nothing about the others
      const entries = await openToCaller(deps.policy, c.var.caller, await deps.catalog());
      const q = c.req.valid('query').q;
      const found = q ? searchCatalog(entries, q).map((r) => r.entry) : entries;
      return c.json({ entries: found.length > 0 ? found : entries, fallback: found.length === 0 }, 200);
    })
    .openapi(session, async (c) => {
      const { session_id } = c.req.valid('param');
      const turns = await store.recentTurns(deps.db, c.var.caller.user, session_id, deps.config.SESSION_TTL, 100);
      return c.json(
        {
          session_id,
          history: turns.map((t) => ({ question: t.question, sql: t.sql, summary: t.summary, at: t.created_at.toISOString() })),
        },
        200,
      );
    })
    .openapi(feedback, async (c) => {
      const body = c.req.valid('json');
      await recordFeedback(deps, c.var.caller, body);
      emit(
        { log: c.var.log, requestId: c.var.requestId, user: c.var.caller.user, role: c.var.caller.roles.join(',') },
        'explore_feedback',
        body,
      );
      return c.json({ recorded: true as const, dashboard_id: body.dashboard_id, rating: body.rating }, 201);
    });
}
