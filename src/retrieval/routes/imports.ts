import { createRoute, z } from '@hono/zod-openapi';
import { apiRoutes, filledText, jsonBody, jsonResponse as json, problems } from '../../platform/openapi/index.ts';
import type { RetrievalDeps } from '../deps.ts';
import { cancelImport, getImport, listImports, startImport } from '../imports/index.ts';
import { slugSchema } from './schemas.ts';

// Imports: a Trino table or query the caller may read, embedded into a lake collection (docs/retrieval.md, "Imports").

const importParams = z.object({ slug: slugSchema, id: z.uuid('an import id is a UUID') });

const importSchema = z.object({
  import_id: z.uuid(),
  collection: z.string(),
  document_id: z.uuid().describe('The document the rows belong to: deleting it deletes them'),
  source: z.string(),
  text: z.string(),
  key: z.string(),
  metadata: z.array(z.string()),
  status: z.enum(['running', 'done', 'failed', 'cancelled']),
  error: z.string().nullable(),
  rows_total: z.number().describe('Rows of the source with a key and a text, counted when the import was created'),
  rows_done: z.number().describe('Rows in the collection'),
  parts: z.int().describe('The source is read in this many parts, by a hash of the key'),
  parts_done: z.int(),
  rate_per_second: z.number().nullable().describe('Rows a second since the workers last started'),
  eta_seconds: z.number().nullable().describe('Seconds left at that rate'),
  created_by: z.string(),
  created_at: z.iso.datetime(),
  finished_at: z.iso.datetime().nullable(),
});

const create = createRoute({
  method: 'post',
  path: '/{slug}/imports',
  summary: 'Embed the rows of a Trino table or query into a lake collection',
  description:
    "Read as the caller on Trino, in parts, embedded in batches and written to the collection's table. The same import asked again resumes it (200), skipping the keys already embedded.",
  request: {
    params: z.object({ slug: slugSchema }),
    body: jsonBody(
      z
        .object({
          source: filledText(20_000, 'source must not be empty').describe('`catalog.schema.table`, or one SELECT statement'),
          text: filledText(2_000, 'text must not be empty').describe('The column (or expression) embedded'),
          key: filledText(2_000, 'key must not be empty').describe('The column (or expression) that identifies a row'),
          metadata: z.array(z.string()).max(32).optional().describe('Source columns kept beside each row in the table'),
          workers: z
            .int('workers must be an integer')
            .min(0)
            .max(16)
            .optional()
            .describe(
              'Workers this service runs for it (default SVC_RAG_IMPORT_WORKERS); 0 leaves it to `svc embed --import` (a Kubernetes Job)',
            ),
        })
        .strict(),
    ),
  },
  responses: {
    202: json(importSchema, 'The new import, running'),
    200: json(importSchema, 'The same import asked before, resumed unless done'),
    ...problems(400, 401, 403, 404, 409, 413, 415, 422, 429, 502, 503, 504),
  },
});

const list = createRoute({
  method: 'get',
  path: '/{slug}/imports',
  summary: "The collection's imports, newest first",
  request: { params: z.object({ slug: slugSchema }) },
  responses: { 200: json(z.object({ imports: z.array(importSchema) }), 'The imports'), ...problems(400, 401, 404, 503) },
});

const get = createRoute({
  method: 'get',
  path: '/{slug}/imports/{id}',
  summary: "An import's progress: rows done and total, rate and ETA",
  request: { params: importParams },
  responses: { 200: json(importSchema, 'The import'), ...problems(400, 401, 404, 503) },
});

const cancel = createRoute({
  method: 'delete',
  path: '/{slug}/imports/{id}',
  summary: 'Cancel an import: its workers stop at their next file, the rows written stay',
  request: { params: importParams },
  responses: { 200: json(importSchema, 'The import, cancelled'), ...problems(400, 401, 403, 404, 503) },
});

export function importRoutes(deps: RetrievalDeps) {
  return apiRoutes()
    .openapi(create, async (c) => {
      const { workers, ...input } = c.req.valid('json');
      const { view, created } = await startImport(deps, c.var.caller, c.req.valid('param').slug, input, workers);
      return created ? c.json(view, 202) : c.json(view, 200);
    })
    .openapi(list, async (c) => c.json({ imports: await listImports(deps, c.var.caller, c.req.valid('param').slug) }, 200))
    .openapi(get, async (c) => {
      const { slug, id } = c.req.valid('param');
      return c.json(await getImport(deps, c.var.caller, slug, id), 200);
    })
    .openapi(cancel, async (c) => {
      const { slug, id } = c.req.valid('param');
      return c.json(await cancelImport(deps, c.var.caller, slug, id), 200);
    });
}
