import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, jsonResponse as json, problems } from '../../platform/openapi/index.ts';
import type { RetrievalDeps } from '../deps.ts';
import { listDocuments, uploadDocument } from '../documents.ts';
import { untrackedUpload, type UploadProgress } from '../upload-progress.ts';
import { slugParam, uploadIdSchema } from './schemas.ts';

export const documentSchema = z.object({
  document_id: z.uuid(),
  collection: z.string(),
  filename: z.string(),
  content_type: z.string(),
  format: z.string(),
  size_bytes: z.int(),
  sha256: z.string(),
  pages: z.int(),
  ocr_pages: z.int(),
  status: z.string().describe('INDEXED once ingestion has finished'),
  chunk_count: z.int(),
  uploaded_by: z.string(),
  created_at: z.iso.datetime(),
});
const uploaded = documentSchema.extend({
  duplicate: z.boolean().describe('The collection already held these bytes: this is that document, nothing was stored'),
});

// Written as a plain JSON Schema, not zod: a zod schema would have the route parse the form into memory, and the
// upload streams its one part to disk (upload-stream.ts), which refuses anything else with a 400.
const multipartFile = {
  type: 'object' as const,
  required: ['file'],
  properties: {
    file: { type: 'string' as const, format: 'binary', description: 'The document, at most SVC_MAX_UPLOAD_BYTES (50 MiB by default)' },
  },
};

const upload = createRoute({
  method: 'post',
  path: '/{slug}/documents',
  summary: 'Upload a document: extracted, chunked, embedded and stored, or nothing is',
  description: 'multipart/form-data with one file part named `file`, streamed to disk; 200 when the collection already held these bytes.',
  request: {
    params: slugParam,
    query: z.object({
      upload_id: uploadIdSchema
        .optional()
        .describe('Names the upload so its progress can be read at GET /collections/{slug}/uploads/{upload_id} while it runs'),
    }),
    body: { required: true, content: { 'multipart/form-data': { schema: multipartFile } } },
  },
  responses: {
    201: json(uploaded, 'The new document, INDEXED with its chunk count'),
    200: json(uploaded, 'The document the collection already held (`duplicate: true`)'),
    ...problems(400, 401, 403, 404, 409, 413, 422, 429, 502, 503, 504),
  },
});

const list = createRoute({
  method: 'get',
  path: '/{slug}/documents',
  summary: "The collection's documents",
  request: { params: slugParam },
  responses: { 200: json(z.object({ documents: z.array(documentSchema) }), 'The documents'), ...problems(400, 401, 404, 503) },
});

export function collectionDocumentRoutes(deps: RetrievalDeps, uploads: UploadProgress) {
  return apiRoutes()
    .openapi(upload, async (c) => {
      const { slug } = c.req.valid('param');
      const { upload_id } = c.req.valid('query');
      const length = Number(c.req.header('content-length'));
      const progress = upload_id
        ? uploads.start(upload_id, c.var.caller.user, slug, Number.isSafeInteger(length) ? length : null)
        : untrackedUpload;
      // the raw request: its body is read once, by the spooler
      const { document, created } = await uploadDocument(deps, c.var.caller, slug, c.req.raw, progress);
      return created ? c.json(document, 201) : c.json(document, 200);
    })
    .openapi(list, async (c) => c.json({ documents: await listDocuments(deps, c.var.caller, c.req.valid('param').slug) }, 200));
}
