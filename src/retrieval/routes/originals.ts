import { Readable } from 'node:stream';
import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, problems } from '../../platform/openapi/index.ts';
import type { RetrievalDeps } from '../deps.ts';
import { readOriginal } from '../originals.ts';
import { slugSchema } from './schemas.ts';

const params = z.object({ slug: slugSchema, document_id: z.uuid({ message: 'document_id must be a document id (a UUID)' }) });

const original = createRoute({
  method: 'get',
  path: '/{slug}/documents/{document_id}/original',
  summary: 'The file as it was uploaded, with its stored content type, for whoever may query the collection',
  description:
    'Sent as an attachment that no browser runs (a sandboxing Content-Security-Policy, no sniffing); 404 once ' +
    'SVC_ORIGINALS_RETENTION_DAYS has passed, or for a document uploaded before originals were kept.',
  request: { params },
  responses: {
    200: { description: 'The bytes', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
    ...problems(400, 401, 403, 404, 503),
  },
});

/** RFC 6266's filename*: the name as UTF-8, percent-encoded, so no quote or line break can reach the header. */
const attachment = (filename: string) => `attachment; filename*=UTF-8''${encodeURIComponent(filename)}`;

export function originalRoutes(deps: RetrievalDeps) {
  return apiRoutes().openapi(original, async (c) => {
    const { slug, document_id } = c.req.valid('param');
    const file = await readOriginal(deps, c.var.caller, slug, document_id);
    // an uploaded HTML or SVG file must never run as this origin's page
    return new Response(Readable.toWeb(file.body) as ReadableStream<Uint8Array>, {
      status: 200,
      headers: {
        'Content-Type': file.content_type,
        'Content-Length': String(file.size),
        'Content-Disposition': attachment(file.filename),
        'Content-Security-Policy': "default-src 'none'; sandbox",
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'private, no-store',
      },
    }) as never;
  });
}
