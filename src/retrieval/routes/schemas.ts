import { z } from '@hono/zod-openapi';

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
