import { Hono } from 'hono';
import { z } from 'zod';
import { validate, type AppEnv } from '../../platform/http.ts';
import type { RetrievalDeps } from '../deps.ts';
import { listDocuments, uploadDocument } from '../documents.ts';
import { slugSchema } from './collections.ts';

const slugParam = z.object({ slug: slugSchema });

/** Multipart with one part named `file`, streamed to disk; the body is never parsed into memory. */
export function documentRoutes(deps: RetrievalDeps) {
  return new Hono<AppEnv>()
    .post('/:slug/documents', validate('param', slugParam), async (c) => {
      // 201 for a new document; 200 with `duplicate: true` when the collection already held these bytes
      const { document, created } = await uploadDocument(deps, c.var.caller, c.req.valid('param').slug, c.req.raw);
      return c.json(document, created ? 201 : 200);
    })
    .get('/:slug/documents', validate('param', slugParam), async (c) =>
      c.json({ documents: await listDocuments(deps, c.var.caller, c.req.valid('param').slug) }),
    );
}
