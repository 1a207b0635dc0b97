import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, jsonResponse as json, problems } from '../../platform/openapi/index.ts';
import type { RetrievalDeps } from '../deps.ts';
import { readPage } from '../pages.ts';
import { positiveInt, slugSchema } from './schemas.ts';

const pageParams = z.object({
  slug: slugSchema,
  document_id: z.uuid({ message: 'document_id must be a document id (a UUID)' }),
  page: positiveInt('page'),
});

const pageView = z.object({
  document_id: z.string(),
  filename: z.string(),
  page: z.int(),
  pages: z.int().describe("The document's page count"),
  chunks: z.array(z.object({ chunk_id: z.string(), text: z.string() })),
});

const page = createRoute({
  method: 'get',
  path: '/{slug}/documents/{document_id}/pages/{page}',
  summary: 'A page of a document, as a citation opens it: its chunks in order',
  request: { params: pageParams },
  responses: { 200: json(pageView, 'The page'), ...problems(400, 401, 403, 404, 502, 503, 504) },
});

export function pageRoutes(deps: RetrievalDeps) {
  return apiRoutes().openapi(page, async (c) => {
    const { slug, document_id, page } = c.req.valid('param');
    return c.json(await readPage(deps, c.var.caller, slug, document_id, page), 200);
  });
}
