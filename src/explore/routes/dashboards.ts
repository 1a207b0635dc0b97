import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import { accessOf, deleteDashboard, launchOf, listVisible, shareDashboard } from '../dashboards/sharing.ts';
import type { ExploreDeps } from '../deps.ts';

const idParam = z.object({ id: z.string().min(1).max(100) });
const scopeQuery = z.object({ scope: z.enum(['mine', 'shared', 'public', 'all']).default('all') });
const shareBody = z.object({
  visibility: z.enum(['private', 'users', 'groups', 'public']),
  allowed_users: z.array(z.string().trim().min(1).max(200)).max(500).default([]),
  allowed_groups: z.array(z.string().trim().min(1).max(200)).max(500).default([]),
});

export function dashboardRoutes(deps: ExploreDeps) {
  return new Hono<AppEnv>()
    .get('/', validate('query', scopeQuery), async (c) =>
      c.json({ dashboards: await listVisible(deps, c.var.caller, c.req.valid('query').scope) }),
    )
    .get('/:id/access', validate('param', idParam), async (c) => c.json(await accessOf(deps, c.var.caller, c.req.valid('param').id)))
    .get('/:id/launch', validate('param', idParam), async (c) => c.json(await launchOf(deps, c.var.caller, c.req.valid('param').id)))
    .patch('/:id/share', validate('param', idParam), validate('json', shareBody), async (c) =>
      c.json(await shareDashboard(deps, c.var.caller, c.req.valid('param').id, c.req.valid('json'))),
    )
    .delete('/:id', validate('param', idParam), async (c) => c.json(await deleteDashboard(deps, c.var.caller, c.req.valid('param').id)));
}
