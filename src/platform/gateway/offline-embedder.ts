import type { Embedder } from './embedder.ts';

// The local lexical fallback: feature hashing of words and adjacent word pairs. It knows no meaning, only shared
// vocabulary, but it is deterministic, needs no network and is fast enough to embed hundreds of chunks per upload.
export const OFFLINE_MODEL = 'offline-hashing';

export function createOfflineEmbedder(dim = 768): Embedder {
  if (!Number.isInteger(dim) || dim < 1) throw new Error(`offline embedder dimension must be a positive integer, got ${dim}`);
  return {
    model: OFFLINE_MODEL,
    dim,
    offline: true,
    async embed(texts) {
      return texts.map((t) => hashEmbed(t, dim));
    },
  };
}

export function hashEmbed(text: string, dim: number): number[] {
  const v = new Float64Array(dim);
  const words = tokenize(text);
  for (let i = 0; i < words.length; i++) {
    add(v, words[i]!, 1);
    // Pairs carry a little word order, weighted lower than the words themselves.
    if (i + 1 < words.length) add(v, `${words[i]} ${words[i + 1]}`, 0.5);
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  // An empty text (or one with no words) stays the zero vector rather than 0/0 = NaN.
  return Array.from(v, (x) => (norm > 0 ? x / norm : 0));
}

// Lower-cased runs of Unicode letters and digits, accents folded (é -> e) so spelling variants meet.
export function tokenize(text: string): string[] {
  const folded = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  return folded.match(/[\p{L}\p{N}]+/gu) ?? [];
}

function add(v: Float64Array, feature: string, weight: number): void {
  const h = fnv1a(feature);
  // Index from the hash; sign from a second, differently seeded hash so collisions cancel rather than pile up.
  const sign = (fnv1a(feature, 0x9747b28c) & 1) === 0 ? 1 : -1;
  const i = h % v.length;
  v[i] = (v[i] ?? 0) + sign * weight;
}

// FNV-1a over UTF-16 code units, 32 bits.
export function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
