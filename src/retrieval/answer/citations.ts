import type { ChunkResult } from '../query.ts';
import { closestSentence, termsOf } from './sentences.ts';

export type Citation = {
  marker: number;
  chunk_id: string;
  document_id: string;
  filename: string;
  page: number;
  score: number;
  /** The cited chunk's sentence closest to the claim the marker follows. */
  quote: string;
};

/** One citation per marker the answer uses, in order of first use; `chunks[n - 1]` is marker n. */
export function citationsOf(answer: string, used: readonly number[], chunks: readonly ChunkResult[], question: string): Citation[] {
  return used.map((marker) => {
    const chunk = chunks[marker - 1]!;
    const claim = termsOf(claimBefore(answer, answer.indexOf(`[${marker}]`)));
    const about = claim.size > 0 ? claim : termsOf(question);
    return {
      marker,
      chunk_id: chunk.chunk_id,
      document_id: chunk.document_id,
      filename: chunk.filename,
      page: chunk.page,
      score: chunk.score,
      quote: closestSentence(chunk.text, about),
    };
  });
}

/** The sentence a marker at `at` closes: back to the previous sentence's end, markers left out. */
export function claimBefore(answer: string, at: number): string {
  const before = answer
    .slice(0, Math.max(0, at))
    .replace(/\[\d+\]/g, '')
    .replace(/[\s.!?]+$/, '');
  const end = Math.max(before.lastIndexOf('. '), before.lastIndexOf('! '), before.lastIndexOf('? '), before.lastIndexOf('\n'));
  return before.slice(end + 1).trim();
}
