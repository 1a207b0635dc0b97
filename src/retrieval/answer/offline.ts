import type { ChunkResult } from '../query.ts';
import { withoutMarkers } from './markers.ts';
import { overlap, sentences, termsOf } from './sentences.ts';

// With no chat model configured, the answer is extractive: the sentences of the retrieved chunks that share most
// terms with the question, each followed by its chunk's marker, under a line saying that it is the offline fallback.

export const OFFLINE_ANSWER_MODEL = 'offline-extractive';
export const OFFLINE_PREFACE =
  'Offline fallback (no chat model is configured: SVC_CHAT_URL is unset). The sentences of the collection closest to your question:';
const SENTENCES = 3;

export function extractiveAnswer(question: string, chunks: readonly ChunkResult[]): string {
  const asked = termsOf(question);
  const scored = chunks.flatMap((chunk, c) =>
    sentences(withoutMarkers(chunk.text)).map((text, position) => ({
      text,
      marker: c + 1,
      position,
      score: overlap(termsOf(text), asked),
    })),
  );
  const best = scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.marker - b.marker || a.position - b.position)
    .slice(0, SENTENCES);
  const picked = best.length > 0 ? best : scored.slice(0, 1);
  return [OFFLINE_PREFACE, '', ...picked.map((s) => `${s.text} [${s.marker}]`)].join('\n');
}
