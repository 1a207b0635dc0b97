import { z } from '@hono/zod-openapi';
import { FORMATS } from '../filter.ts';

// What several of retrieval's routes share: the slug that names a collection in a path, top_k, a path's positive
// integer, and a ranked chunk.

export const slugSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$/,
    'a slug is 2 to 63 lowercase letters, digits and hyphens, not starting or ending with a hyphen',
  );

export const slugParam = z.object({ slug: slugSchema });

/** How many chunks to retrieve: at most SVC_MAX_TOP_K, so the document carries the server's own ceiling. */
export const topK = (max: number) =>
  z
    .number()
    .int('top_k must be an integer')
    .min(1, 'top_k must be at least 1')
    .max(max, `top_k must be at most ${max}, the ceiling (SVC_MAX_TOP_K)`)
    .optional()
    .describe('Default SVC_DEFAULT_TOP_K (5)');

/** A path's id or page number: a positive integer JavaScript holds exactly. */
export const positiveInt = (name: string) =>
  z.coerce
    .number({ message: `${name} must be a number` })
    .int(`${name} must be an integer`)
    .min(1, `${name} must be at least 1`)
    .max(Number.MAX_SAFE_INTEGER, `${name} must be at most ${Number.MAX_SAFE_INTEGER}`);

/** One citation of an answer: its marker, the chunk and where it stands, and the sentence quoted. */
export const citation = z.object({
  marker: z.int(),
  chunk_id: z.string(),
  document_id: z.string(),
  filename: z.string(),
  page: z.int(),
  score: z.number(),
  quote: z.string().describe("The cited chunk's sentence closest to the claim the marker follows"),
});

export const chunk = z.object({
  chunk_id: z.string(),
  document_id: z.string(),
  filename: z.string(),
  page: z.int(),
  text: z.string(),
  score: z.number().describe('Cosine similarity (dense), BM25 (keyword) or the reciprocal-rank-fused score (hybrid)'),
  dense_rank: z.int().nullable().describe('Rank in the dense candidate list; null when that list did not hold the chunk'),
  keyword_rank: z.int().nullable().describe('Rank in the keyword candidate list; null when that list did not hold the chunk'),
});

/**
 * A query's or an answer's filter: the documents ranked are those of the collection with one of `document_ids`,
 * one of `formats`, uploaded at or after `uploaded_after` and before `uploaded_before` (every field given must hold).
 */
export const filterSchema = z
  .object({
    document_ids: z
      .array(z.uuid({ message: 'a document id is a UUID' }))
      .min(1, 'document_ids must name at least one document; leave it out to rank every document')
      .max(1000, 'document_ids may name at most 1000 documents')
      .optional(),
    formats: z
      .array(z.enum(FORMATS, { message: `a format is one of ${FORMATS.join(', ')}` }))
      .min(1, 'formats must name at least one format; leave it out to rank every format')
      .optional(),
    uploaded_after: z.iso
      .datetime({ offset: true, message: 'uploaded_after must be an ISO 8601 date and time, e.g. 2026-11-01T00:00:00Z' })
      .optional()
      .describe('Documents uploaded at or after this instant'),
    uploaded_before: z.iso
      .datetime({ offset: true, message: 'uploaded_before must be an ISO 8601 date and time, e.g. 2026-12-01T00:00:00Z' })
      .optional()
      .describe('Documents uploaded before this instant'),
  })
  .strict()
  .superRefine((f, ctx) => {
    if (f.uploaded_after && f.uploaded_before && Date.parse(f.uploaded_after) >= Date.parse(f.uploaded_before))
      ctx.addIssue({
        code: 'custom',
        path: ['uploaded_before'],
        message: `uploaded_before (${f.uploaded_before}) must be later than uploaded_after (${f.uploaded_after})`,
      });
  })
  .optional()
  .describe('Narrows the documents ranked, after the policy: by id, format and upload time');

/** An audit record's filter: the fields the request gave. */
export const auditedFilterSchema = z.object({
  document_ids: z.array(z.string()).optional(),
  formats: z.array(z.string()).optional(),
  uploaded_after: z.string().optional(),
  uploaded_before: z.string().optional(),
});

/** A client's name for one upload: a UUID, or any 8 to 100 letters, digits, hyphens and underscores. */
export const uploadIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,100}$/, 'upload_id is 8 to 100 letters, digits, hyphens and underscores (a UUID will do)');
