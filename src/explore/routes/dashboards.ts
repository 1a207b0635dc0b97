import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, filledText, jsonBody, jsonResponse as json, problems, storableText } from '../../platform/openapi/index.ts';
import { buildDashboard } from '../dashboards/cards.ts';
import { chartSpec } from '../dashboards/chart.ts';
import { changeChart } from '../dashboards/chart-change.ts';
import { accessOf, deleteDashboard, launchOf, listVisible, shareDashboard } from '../dashboards/sharing.ts';
import type { ExploreDeps } from '../deps.ts';

const idParam = z.object({ id: storableText().min(1).max(100) });
const scopeQuery = z.object({ scope: z.enum(['mine', 'shared', 'public', 'all']).default('all') });
const shareBody = z.object({
  visibility: z.enum(['private', 'users', 'groups', 'public']),
  allowed_users: z.array(filledText(200)).max(500).default([]),
  allowed_groups: z.array(filledText(200)).max(500).default([]),
});

const dashboard = z.object({
  id: z.string(),
  owner: z.string(),
  visibility: z.enum(['private', 'users', 'groups', 'public']),
  allowed_users: z.array(z.string()),
  allowed_groups: z.array(z.string()),
  title: z.string(),
  question: z.string(),
  sql: z.string(),
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  chart: chartSpec.nullable().describe('The chart its page draws; null for a dashboard of cards'),
  cards: z.int().describe("How many cards it holds; 0 for one question's dashboard"),
  url: z.string().describe('Its address in the dashboards runtime'),
  created_at: z.iso.datetime(),
});
const buildBody = z.object({
  title: filledText(200, 'title must not be empty'),
  cards: z
    .array(z.object({ dashboard_id: storableText().min(1).max(100) }))
    .min(2, 'a dashboard of cards holds 2 to 12 cards')
    .max(12, 'a dashboard of cards holds 2 to 12 cards')
    .refine((cards) => new Set(cards.map((c) => c.dashboard_id)).size === cards.length, 'each card is a different dashboard'),
});
const decision = z.looseObject({ allow: z.boolean(), reason: z.string() });

const list = createRoute({
  method: 'get',
  path: '/',
  summary: 'The dashboards the caller may open, narrowed by scope',
  request: { query: scopeQuery },
  responses: { 200: json(z.object({ dashboards: z.array(dashboard) }), 'The dashboards'), ...problems(400, 401, 503) },
});

const access = createRoute({
  method: 'get',
  path: '/{id}/access',
  summary: "The dashboards policy's view decision for the caller",
  request: { params: idParam },
  responses: { 200: json(decision, 'The decision'), ...problems(400, 401, 404, 503) },
});

const launch = createRoute({
  method: 'get',
  path: '/{id}/launch',
  summary: "The runtime's one question: may the caller open it, and where is its page (only when allowed)",
  description:
    'A page still being drawn after publish is waited for, up to a few seconds (then 503 with Retry-After); a page that could not be drawn is a 409 saying why.',
  request: { params: idParam },
  responses: {
    200: json(
      z.union([
        z.object({ allow: z.literal(false), reason: z.string() }),
        z.object({
          allow: z.literal(true),
          reason: z.string(),
          object_key: z.string(),
          digest: z.string().describe('sha256 of the page'),
          owner: z.string(),
        }),
      ]),
      'The decision',
    ),
    ...problems(400, 401, 404, 409, 503),
  },
});

const share = createRoute({
  method: 'patch',
  path: '/{id}/share',
  summary: 'Change who may open a dashboard (its owner only)',
  request: { params: idParam, body: jsonBody(shareBody) },
  responses: { 200: json(dashboard, 'The updated dashboard'), ...problems(400, 401, 404, 413, 415, 503) },
});

const build = createRoute({
  method: 'post',
  path: '/',
  summary: 'Build a dashboard of 2 to 12 cards, each a dashboard the caller owns, signed as a whole and card by card',
  request: { body: jsonBody(buildBody) },
  responses: { 201: json(dashboard, 'The new dashboard'), ...problems(400, 401, 403, 404, 409, 413, 415, 422, 503) },
});

const chart = createRoute({
  method: 'put',
  path: '/{id}/chart',
  summary: 'Draw the published rows with another chart: the page is rendered and signed again (its owner only)',
  request: { params: idParam, body: jsonBody(chartSpec) },
  responses: { 200: json(dashboard, 'The updated dashboard'), ...problems(400, 401, 404, 409, 413, 415, 422, 503) },
});

const remove = createRoute({
  method: 'delete',
  path: '/{id}',
  summary: 'Delete a dashboard (owner, an allowed user, an administrator); its page goes with the periodic cleanup',
  request: { params: idParam },
  responses: { 200: json(z.object({ deleted: z.string() }), 'Deleted'), ...problems(400, 401, 404, 503) },
});

export function dashboardRoutes(deps: ExploreDeps) {
  return apiRoutes()
    .openapi(list, async (c) => c.json({ dashboards: await listVisible(deps, c.var.caller, c.req.valid('query').scope) }, 200))
    .openapi(access, async (c) => c.json(await accessOf(deps, c.var.caller, c.req.valid('param').id), 200))
    .openapi(launch, async (c) => c.json(await launchOf(deps, c.var.caller, c.req.valid('param').id), 200))
    .openapi(share, async (c) => c.json(await shareDashboard(deps, c.var.caller, c.req.valid('param').id, c.req.valid('json')), 200))
    .openapi(build, async (c) => c.json(await buildDashboard(deps, c.var.caller, c.req.valid('json')), 201))
    .openapi(chart, async (c) => c.json(await changeChart(deps, c.var.caller, c.req.valid('param').id, c.req.valid('json')), 200))
    .openapi(remove, async (c) => c.json(await deleteDashboard(deps, c.var.caller, c.req.valid('param').id), 200));
}
