import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, filledText, jsonBody, jsonResponse as json, problems, storableText } from '../../platform/openapi/index.ts';
import { createCollection, deleteCollection, getCollection, listCollections, updateCollection } from '../collections.ts';
import type { RetrievalDeps } from '../deps.ts';
import { BACKENDS } from '../backends/index.ts';
import { getWatchStatus } from '../watch/status.ts';
import { slugParam, slugSchema } from './schemas.ts';

const name = filledText(200, 'name must not be empty');
const description = storableText().max(2000);
const allowedRoles = z.array(filledText(100)).max(100);
/** A folder or S3 prefix under SVC_WATCH_ROOTS, scanned every interval_seconds; null stops watching. */
const watch = z
  .object({
    uri: filledText(2000, 'uri must not be empty'),
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
  allowed_roles: allowedRoles.default([]).describe('Roles that may read the collection; empty: open to every caller'),
  watch: watch.optional(),
  backend: z
    .enum(BACKENDS)
    .optional()
    .describe(
      'Where its chunks are kept, fixed at creation: `memory` (Postgres, ranked in memory), `lake` (an Iceberg table ranked by Trino as the caller) or `search` (an OpenSearch index ranking by BM25 and k-NN); default SVC_RAG_DEFAULT_BACKEND',
    ),
});

const patchBody = z
  .object({ name: name.optional(), description: description.optional(), allowed_roles: allowedRoles.optional(), watch: watch.optional() })
  .strict()
  .refine((p) => Object.keys(p).length > 0, 'name at least one of name, description, allowed_roles, watch')
  .openapi({ minProperties: 1 });

const collection = z.object({
  slug: z.string(),
  name: z.string(),
  description: z.string(),
  allowed_roles: z.array(z.string()),
  document_count: z.int(),
  chunk_count: z.int(),
  size_bytes: z.int().describe('Bytes kept for its documents: the original files (while kept) and the extracted text'),
  created_by: z.string(),
  created_at: z.iso.datetime(),
  watch: z
    .object({ uri: z.string(), interval_seconds: z.int() })
    .nullable()
    .describe('The watched source; its scans at GET /collections/{slug}/watch'),
  backend: z.enum(BACKENDS).describe('Where its chunks are kept: `memory`, `lake` or `search`'),
});

const watchStatus = z.object({
  uri: z.string().nullable().describe('null: the collection watches nothing (set a watch with PATCH)'),
  interval_seconds: z.int().nullable(),
  set_by: z.string().nullable(),
  set_at: z.iso.datetime().nullable(),
  last_scan_at: z.iso.datetime().nullable(),
  next_scan_at: z.iso.datetime().nullable(),
  scanning: z.boolean().describe('A replica holds the lease and is scanning now'),
  error: z.string().nullable().describe('Why the last scan could not read the source'),
  counts: z.object({ seen: z.int(), ingested: z.int(), updated: z.int(), deleted: z.int(), failed: z.int() }),
  failures: z
    .array(
      z.object({
        path: z.string(),
        status: z.enum(['failed', 'skipped']),
        reason: z.string(),
        attempts: z.int(),
        retry_at: z.iso.datetime().nullable(),
      }),
    )
    .describe('Every file of the source that is not indexed now, with why and when it is tried again'),
});

const create = createRoute({
  method: 'post',
  path: '/',
  summary: 'Create a collection (and, with `watch`, the source it ingests from)',
  request: { body: jsonBody(createBody) },
  responses: { 201: json(collection, 'The created collection'), ...problems(400, 401, 403, 409, 413, 415, 502, 503, 504) },
});

const list = createRoute({
  method: 'get',
  path: '/',
  summary: 'The collections the caller may see, with their document and chunk counts',
  responses: { 200: json(z.object({ collections: z.array(collection) }), 'The collections'), ...problems(401, 503) },
});

const get = createRoute({
  method: 'get',
  path: '/{slug}',
  summary: 'One collection the caller may see',
  request: { params: slugParam },
  responses: { 200: json(collection, 'The collection'), ...problems(400, 401, 404, 503) },
});

const update = createRoute({
  method: 'patch',
  path: '/{slug}',
  summary: 'Change what the patch names; `watch: null` stops watching (the documents stay)',
  request: { params: slugParam, body: jsonBody(patchBody) },
  responses: { 200: json(collection, 'The updated collection'), ...problems(400, 401, 403, 404, 413, 415, 503) },
});

const watchOf = createRoute({
  method: 'get',
  path: '/{slug}/watch',
  summary: "The collection's watched source and its scans (404 when it watches none)",
  request: { params: slugParam },
  responses: { 200: json(watchStatus, 'The watch'), ...problems(400, 401, 404, 503) },
});

const remove = createRoute({
  method: 'delete',
  path: '/{slug}',
  summary: 'Delete a collection with its documents, chunks and watch',
  request: { params: slugParam },
  responses: { 200: json(z.object({ deleted: z.string() }), 'Deleted'), ...problems(400, 401, 403, 404, 502, 503, 504) },
});

export function collectionRoutes(deps: RetrievalDeps) {
  return apiRoutes()
    .openapi(create, async (c) => c.json(await createCollection(deps, c.var.caller, c.req.valid('json')), 201))
    .openapi(list, async (c) => c.json({ collections: await listCollections(deps, c.var.caller) }, 200))
    .openapi(get, async (c) => c.json(await getCollection(deps, c.var.caller, c.req.valid('param').slug), 200))
    .openapi(update, async (c) => c.json(await updateCollection(deps, c.var.caller, c.req.valid('param').slug, c.req.valid('json')), 200))
    .openapi(watchOf, async (c) => c.json(await getWatchStatus(deps, c.var.caller, c.req.valid('param').slug), 200))
    .openapi(remove, async (c) => c.json(await deleteCollection(deps, c.var.caller, c.req.valid('param').slug), 200));
}
