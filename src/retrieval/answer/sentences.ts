import { analyse } from '../keyword-index/index.ts';

// Sentences of a chunk and how close one is to a question or a claim: shared search terms (the keyword index's
// analysis, so stemming and stop words are the ranking's own).

/** A sentence longer than this (a PDF line run without full stops) is cut, so a quote stays a quote. */
const MAX_WORDS = 50;

export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    for (const sentence of paragraph.replace(/\s+/g, ' ').split(/(?<=[.!?])\s+(?=\S)/)) {
      const words = sentence.trim().split(' ').filter(Boolean);
      for (let i = 0; i < words.length; i += MAX_WORDS) out.push(words.slice(i, i + MAX_WORDS).join(' '));
    }
  }
  return out;
}

export const termsOf = (text: string): Set<string> => new Set(analyse(text).terms);

/** How many of the terms the sentence holds. */
export function overlap(sentenceTerms: ReadonlySet<string>, terms: ReadonlySet<string>): number {
  let n = 0;
  for (const t of terms) if (sentenceTerms.has(t)) n++;
  return n;
}

/** The sentence of `text` sharing most terms with `about` (the first on a tie, the first when none shares any). */
export function closestSentence(text: string, about: ReadonlySet<string>): string {
  let best = '';
  let bestScore = -1;
  for (const s of sentences(text)) {
    const score = overlap(termsOf(s), about);
    if (score > bestScore) [best, bestScore] = [s, score];
  }
  return best;
}
