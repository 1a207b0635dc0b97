import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import { createCollection, deleteCollection, getCollection, listCollections } from '../collections.ts';
import type { RetrievalDeps } from '../deps.ts';

export const slugSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$/, 'a slug is 2 to 63 lowercase letters, digits and hyphens, not starting or ending with a hyphen');

const createBody = z.object({
  slug: slugSchema,
  name: z.string().trim().min(1, 'name must not be empty').max(200),
  description: z.string().max(2000).optional(),
  allowed_roles: z.array(z.string().trim().min(1).max(100)).max(100).default([]),
});

const slugParam = z.object({ slug: slugSchema });

export function collectionRoutes(deps: RetrievalDeps) {
  return new Hono<AppEnv>()
    .post('/', validate('json', createBody), async (c) =>
      c.json(await createCollection(deps, c.var.caller, c.req.valid('json')), 201),
    )
    .get('/', async (c) => c.json({ collections: await listCollections(deps, c.var.caller) }))
    .get('/:slug', validate('param', slugParam), async (c) =>
      c.json(await getCollection(deps, c.var.caller, c.req.valid('param').slug)),
    )
    .delete('/:slug', validate('param', slugParam), async (c) =>
      c.json(await deleteCollection(deps, c.var.caller, c.req.valid('param').slug)),
    );
}
