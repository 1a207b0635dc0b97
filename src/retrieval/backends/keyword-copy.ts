import type { Scored } from '../fuse.ts';
import { analyse, type KeywordIndex } from '../keyword-index/index.ts';

// Keyword ranking by svc's own BM25 copy of a collection (the memory and lake backends): the question analysed as
// the chunks were, and under a filter only the chunks of the filter's documents.
export async function rankByKeywordCopy(
  index: KeywordIndex | 'too-large',
  question: string,
  k: number,
  documents: string[] | undefined,
  chunkIdsOf: (documents: string[]) => Promise<Set<string>>,
): Promise<Scored[] | 'too-large'> {
  if (index === 'too-large') return index;
  const terms = analyse(question).terms;
  if (!documents) return index.search(terms, k);
  const allowed = await chunkIdsOf(documents);
  return index.search(terms, k, (id) => allowed.has(id));
}
