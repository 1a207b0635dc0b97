import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import type { RetrievalDeps } from '../deps.ts';
import { readPage } from '../pages.ts';
import { slugSchema } from './collections.ts';

const pageParams = z.object({
  slug: slugSchema,
  document_id: z.uuid({ message: 'document_id must be a document id (a UUID)' }),
  page: z.coerce.number({ message: 'page must be a number' }).int('page must be an integer').min(1, 'page must be at least 1'),
});

/** A page of a document, as a citation opens it. */
export function pageRoutes(deps: RetrievalDeps) {
  return new Hono<AppEnv>().get('/:slug/documents/:document_id/pages/:page', validate('param', pageParams), async (c) => {
    const { slug, document_id, page } = c.req.valid('param');
    return c.json(await readPage(deps, c.var.caller, slug, document_id, page));
  });
}
