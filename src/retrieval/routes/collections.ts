import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import { createCollection, deleteCollection, getCollection, listCollections, updateCollection } from '../collections.ts';
import type { RetrievalDeps } from '../deps.ts';
import { getWatchStatus } from '../watch/status.ts';

export const slugSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$/,
    'a slug is 2 to 63 lowercase letters, digits and hyphens, not starting or ending with a hyphen',
  );

const name = z.string().trim().min(1, 'name must not be empty').max(200);
const description = z.string().max(2000);
const allowedRoles = z.array(z.string().trim().min(1).max(100)).max(100);
/** A folder or S3 prefix under SVC_WATCH_ROOTS, scanned every interval_seconds; null stops watching. */
const watch = z
  .object({
    uri: z.string().trim().min(1, 'uri must not be empty').max(2000),
    interval_seconds: z
      .number()
      .int('interval_seconds must be an integer')
      .min(1, 'interval_seconds must be at least 1')
      .max(604_800, 'interval_seconds must be at most 604800 (a week)'),
  })
  .strict()
  .nullable();

const createBody = z.object({
  slug: slugSchema,
  name,
  description: description.optional(),
  allowed_roles: allowedRoles.default([]),
  watch: watch.optional(),
});

const patchBody = z
  .object({ name: name.optional(), description: description.optional(), allowed_roles: allowedRoles.optional(), watch: watch.optional() })
  .strict()
  .refine((p) => Object.keys(p).length > 0, 'name at least one of name, description, allowed_roles, watch');

const slugParam = z.object({ slug: slugSchema });

export function collectionRoutes(deps: RetrievalDeps) {
  return new Hono<AppEnv>()
    .post('/', validate('json', createBody), async (c) => c.json(await createCollection(deps, c.var.caller, c.req.valid('json')), 201))
    .get('/', async (c) => c.json({ collections: await listCollections(deps, c.var.caller) }))
    .get('/:slug', validate('param', slugParam), async (c) => c.json(await getCollection(deps, c.var.caller, c.req.valid('param').slug)))
    .patch('/:slug', validate('param', slugParam), validate('json', patchBody), async (c) =>
      c.json(await updateCollection(deps, c.var.caller, c.req.valid('param').slug, c.req.valid('json'))),
    )
    .get('/:slug/watch', validate('param', slugParam), async (c) =>
      c.json(await getWatchStatus(deps, c.var.caller, c.req.valid('param').slug)),
    )
    .delete('/:slug', validate('param', slugParam), async (c) =>
      c.json(await deleteCollection(deps, c.var.caller, c.req.valid('param').slug)),
    );
}
