import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import { decideConsole } from '../../platform/policy/index.ts';
import { openToCaller, searchCatalog } from '../catalog.ts';
import { recordFeedback } from '../dashboards/feedback.ts';
import type { ExploreDeps } from '../deps.ts';
import { emit } from '../events.ts';
import * as store from '../store.ts';

const feedbackBody = z.object({
  dashboard_id: z.string().min(1).max(100),
  rating: z.enum(['up', 'down'], { message: "rating is 'up' or 'down'" }),
  comment: z.string().max(2000).default(''),
});

export function miscRoutes(deps: ExploreDeps) {
  return new Hono<AppEnv>()
    .get('/me', async (c) => {
      const { user, roles, groups } = c.var.caller;
      const console = await decideConsole(deps.policy, c.var.caller, 'explore');
      return c.json({ user, roles, groups, console: console.allow });
    })
    .get('/models', async (c) => c.json(await deps.models.list()))
    .get('/catalog', validate('query', z.object({ q: z.string().max(500).default('') })), async (c) => {
      // only the tables the caller may read, and their tags: the catalog says nothing about the others
      const entries = await openToCaller(deps.policy, c.var.caller, await deps.catalog());
      const q = c.req.valid('query').q;
      const found = q ? searchCatalog(entries, q).map((r) => r.entry) : entries;
      return c.json({ entries: found.length > 0 ? found : entries, fallback: found.length === 0 });
    })
    .get('/session/:session_id', async (c) => {
      const turns = await store.recentTurns(deps.db, c.var.caller.user, c.req.param('session_id'), deps.config.SESSION_TTL, 100);
      return c.json({
        session_id: c.req.param('session_id'),
        history: turns.map((t) => ({ question: t.question, sql: t.sql, summary: t.summary, at: t.created_at.toISOString() })),
      });
    })
    .post('/feedback', validate('json', feedbackBody), async (c) => {
      const body = c.req.valid('json');
      await recordFeedback(deps, c.var.caller, body);
      emit(
        { log: c.var.log, requestId: c.var.requestId, user: c.var.caller.user, role: c.var.caller.roles.join(',') },
        'explore_feedback',
        body,
      );
      return c.json({ recorded: true, dashboard_id: body.dashboard_id, rating: body.rating }, 201);
    });
}
