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
  // A pair "a b" is hashed by carrying a's hash on over the space and b (FNV-1a reads left to right), so no pair
  // string is built and no word is hashed more than twice a seed.
  let before = 0;
  let beforeSigned = 0;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const hash = fnv1a(word);
    const signed = fnv1a(word, SIGN_SEED);
    add(v, hash, signed, 1);
    // Pairs carry a little word order, weighted lower than the words themselves (every sum here is exact in
    // float64, so the order the features are added in does not change the vector).
    if (i > 0) add(v, fnv1a(word, afterSpace(before)), fnv1a(word, afterSpace(beforeSigned)), 0.5);
    before = hash;
    beforeSigned = signed;
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  // An empty text (or one with no words) stays the zero vector rather than 0/0 = NaN.
  return Array.from(v, (x) => (norm > 0 ? x / norm : 0));
}

// Lower-cased runs of Unicode letters and digits, accents folded (é -> e) so spelling variants meet. ASCII text (most
// chunks) has nothing to fold and no letter or digit outside a-z, 0-9 once lower-cased, so it skips the Unicode passes.
export function tokenize(text: string): string[] {
  if (ASCII.test(text)) return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const folded = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  return folded.match(/[\p{L}\p{N}]+/gu) ?? [];
}

const ASCII = /^[\x00-\x7f]*$/;

/** Index from the feature's hash; sign from a second, differently seeded hash, so collisions cancel rather than pile up. */
function add(v: Float64Array, hash: number, signed: number, weight: number): void {
  const i = hash % v.length;
  v[i] = v[i]! + ((signed & 1) === 0 ? weight : -weight);
}

const SIGN_SEED = 0x9747b28c;
const afterSpace = (hash: number) => Math.imul(hash ^ 0x20, 0x01000193) >>> 0;

// FNV-1a over UTF-16 code units, 32 bits.
export function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
