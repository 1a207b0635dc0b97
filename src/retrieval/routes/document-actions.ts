import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, jsonResponse as json, problems } from '../../platform/openapi/index.ts';
import type { RetrievalDeps } from '../deps.ts';
import { deleteDocument, documentText, reindexDocument } from '../document-actions.ts';
import { documentSchema } from './documents.ts';
import { slugSchema } from './schemas.ts';

const documentParams = z.object({
  slug: slugSchema,
  document_id: z.uuid({ message: 'document_id must be a document id (a UUID)' }),
});

const remove = createRoute({
  method: 'delete',
  path: '/{slug}/documents/{document_id}',
  summary: 'Delete one document with its chunks, its text and its index entries, all or nothing (the audit keeps its records)',
  request: { params: documentParams },
  responses: { 200: json(z.object({ deleted: z.string() }), 'Deleted'), ...problems(400, 401, 403, 404, 502, 503, 504) },
});

const reindex = createRoute({
  method: 'post',
  path: '/{slug}/documents/{document_id}/reindex',
  summary: "Chunk and embed the document's stored text again with today's settings and model, replacing its chunks at once",
  request: { params: documentParams },
  responses: {
    200: json(documentSchema, 'The document with its new chunk count'),
    ...problems(400, 401, 403, 404, 409, 429, 502, 503, 504),
  },
});

const text = createRoute({
  method: 'get',
  path: '/{slug}/documents/{document_id}/text',
  summary: 'The text extracted from the document, as a file (pages separated by a form feed)',
  request: { params: documentParams },
  responses: {
    200: { description: 'The extracted text', content: { 'text/plain': { schema: z.string() } } },
    ...problems(400, 401, 403, 404, 409, 503),
  },
});

export function documentActionRoutes(deps: RetrievalDeps) {
  return apiRoutes()
    .openapi(remove, async (c) => {
      const { slug, document_id } = c.req.valid('param');
      return c.json(await deleteDocument(deps, c.var.caller, slug, document_id), 200);
    })
    .openapi(reindex, async (c) => {
      const { slug, document_id } = c.req.valid('param');
      return c.json(await reindexDocument(deps, c.var.caller, slug, document_id), 200);
    })
    .openapi(text, async (c) => {
      const { slug, document_id } = c.req.valid('param');
      const { filename, text } = await documentText(deps, c.var.caller, slug, document_id);
      return c.text(text, 200, {
        'Content-Type': 'text/plain; charset=utf-8',
        'Content-Disposition': `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(filename)}`,
      });
    });
}
