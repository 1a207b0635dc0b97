import { z } from '@hono/zod-openapi';

// What several of retrieval's routes share: the slug that names a collection in a path, and a ranked chunk.

export const slugSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$/,
    'a slug is 2 to 63 lowercase letters, digits and hyphens, not starting or ending with a hyphen',
  );

export const slugParam = z.object({ slug: slugSchema });

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
