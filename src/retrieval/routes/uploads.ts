import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, jsonResponse as json, problems } from '../../platform/openapi/index.ts';
import type { UploadProgress } from '../upload-progress.ts';
import { slugSchema, uploadIdSchema } from './schemas.ts';

const status = z.object({
  upload_id: z.string(),
  collection: z.string(),
  filename: z.string().nullable(),
  stage: z.enum(['receiving', 'extracting', 'embedding', 'writing', 'done', 'failed']),
  message: z.string().describe('The stage as a person reads it: "extracting page 3 of 120", "embedding 64 of 300 chunks"'),
  bytes_received: z.int(),
  bytes_total: z.int().nullable().describe("The request's declared length, multipart framing included"),
  pages_done: z.int().nullable(),
  pages_total: z.int().nullable(),
  chunks_done: z.int().nullable(),
  chunks_total: z.int().nullable(),
  document_id: z.string().nullable(),
  error: z.string().nullable(),
  updated_at: z.iso.datetime(),
});

const progress = createRoute({
  method: 'get',
  path: '/{slug}/uploads/{upload_id}',
  summary: 'Where an upload named with upload_id is, for its uploader: kept by the replica receiving it, for a minute after it ends',
  request: { params: z.object({ slug: slugSchema, upload_id: uploadIdSchema }) },
  responses: { 200: json(status, 'The upload'), ...problems(400, 401, 404) },
});

export function uploadProgressRoutes(uploads: UploadProgress) {
  return apiRoutes().openapi(progress, async (c) => {
    const { slug, upload_id } = c.req.valid('param');
    return c.json(uploads.read(upload_id, c.var.caller.user, slug), 200);
  });
}
