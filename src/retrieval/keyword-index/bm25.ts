import type { Analysed } from './analyse.ts';

// Okapi BM25 over an inverted index held in memory: per term, the chunks holding it and how often. Chunks are only
// appended (a deletion rebuilds the index, as the vector copy does), so postings stay in insertion order.
//   score(chunk) = Σ over the question's distinct terms of idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen))
//   idf = ln(1 + (N − df + 0.5) / (df + 0.5))     (never negative, as Lucene's)

export const K1 = 1.2;
export const B = 0.75;

export type KeywordHit = { id: string; score: number };

export interface KeywordIndex {
  readonly size: number;
  add(id: string, analysed: Analysed): void;
  /** The k best chunks holding at least one of the terms, best first; equal scores in insertion order. */
  search(terms: readonly string[], k: number): KeywordHit[];
}

/**
 * A term's chunks and counts, in insertion order; `impacts` caches each chunk's BM25 contribution for the index
 * size it was computed at (idf and the average length move with every append), so a query only adds numbers.
 */
type Postings = { docs: number[]; tfs: number[]; impacts: Float64Array | undefined; impactsAt: number; lastDoc: number };

export function createKeywordIndex(): KeywordIndex {
  const ids: string[] = [];
  let lengths = new Float64Array(1024);
  let totalLength = 0;
  const postings = new Map<string, Postings>();
  // per-chunk length normalisation, recomputed after an append changed the average
  let norms = new Float64Array(0);
  let normsFor = -1;
  let scores = new Float64Array(0);

  function normalisation(): Float64Array {
    const n = ids.length;
    if (normsFor === n) return norms;
    if (norms.length < n) norms = new Float64Array(lengths.length);
    const avg = totalLength / n || 1;
    for (let i = 0; i < n; i++) norms[i] = K1 * (1 - B + (B * lengths[i]!) / avg);
    normsFor = n;
    return norms;
  }

  return {
    get size() {
      return ids.length;
    },

    add(id, { terms, words }) {
      const doc = ids.length;
      ids.push(id);
      if (doc === lengths.length) lengths = grow(lengths);
      lengths[doc] = words;
      totalLength += words;
      // counted in the postings themselves: a chunk's terms arrive together, so its entry is the last one
      for (const term of terms) {
        let p = postings.get(term);
        if (!p) postings.set(term, (p = { docs: [], tfs: [], impacts: undefined, impactsAt: 0, lastDoc: -1 }));
        if (p.lastDoc === doc) {
          p.tfs[p.tfs.length - 1]!++;
        } else {
          p.lastDoc = doc;
          p.docs.push(doc);
          p.tfs.push(1);
        }
      }
    },

    search(terms, k) {
      const n = ids.length;
      if (n === 0 || k < 1) return [];
      const norm = normalisation();
      if (scores.length < n) scores = new Float64Array(lengths.length);
      const touched: number[] = [];
      // distinct terms in the question's order, so every replica adds the same floats in the same order
      for (const term of new Set(terms)) {
        const p = postings.get(term);
        if (!p) continue;
        const impacts = impactsOf(p, n, norm);
        const docs = p.docs;
        for (let i = 0; i < docs.length; i++) {
          const doc = docs[i]!;
          if (scores[doc] === 0) touched.push(doc);
          scores[doc] = scores[doc]! + impacts[i]!;
        }
      }
      const best = topK(touched, scores, k);
      for (const doc of touched) scores[doc] = 0;
      return best.map(({ doc, score }) => ({ id: ids[doc]!, score }));
    },
  };
}

function impactsOf(p: Postings, n: number, norm: Float64Array): Float64Array {
  if (p.impacts && p.impactsAt === n) return p.impacts;
  const df = p.docs.length;
  const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
  const impacts = p.impacts && p.impacts.length === df ? p.impacts : new Float64Array(df);
  for (let i = 0; i < df; i++) {
    const tf = p.tfs[i]!;
    impacts[i] = (idf * tf * (K1 + 1)) / (tf + norm[p.docs[i]!]!);
  }
  p.impacts = impacts;
  p.impactsAt = n;
  return impacts;
}

/** Better first: the higher score, then the earlier chunk. */
const better = (sa: number, da: number, sb: number, db: number) => sa > sb || (sa === sb && da < db);

/** The k best of the touched chunks, best first, through a heap of k whose root is the worst kept. */
function topK(touched: number[], scores: Float64Array, k: number): { doc: number; score: number }[] {
  const heapDocs: number[] = [];
  const heapScores: number[] = [];
  const worse = (i: number, j: number) => better(heapScores[j]!, heapDocs[j]!, heapScores[i]!, heapDocs[i]!);
  const swap = (i: number, j: number) => {
    [heapDocs[i], heapDocs[j]] = [heapDocs[j]!, heapDocs[i]!];
    [heapScores[i], heapScores[j]] = [heapScores[j]!, heapScores[i]!];
  };
  for (const doc of touched) {
    const score = scores[doc]!;
    if (heapDocs.length < k) {
      heapDocs.push(doc);
      heapScores.push(score);
      for (let i = heapDocs.length - 1; i > 0; ) {
        const parent = (i - 1) >> 1;
        if (!worse(i, parent)) break;
        swap(i, parent);
        i = parent;
      }
    } else if (better(score, doc, heapScores[0]!, heapDocs[0]!)) {
      heapDocs[0] = doc;
      heapScores[0] = score;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heapDocs.length && worse(l, m)) m = l;
        if (r < heapDocs.length && worse(r, m)) m = r;
        if (m === i) break;
        swap(i, m);
        i = m;
      }
    }
  }
  return heapDocs.map((doc, i) => ({ doc, score: heapScores[i]! })).sort((a, b) => (better(a.score, a.doc, b.score, b.doc) ? -1 : 1));
}

function grow<T extends Float64Array>(a: T): T {
  const next = new (a.constructor as new (n: number) => T)(a.length * 2);
  next.set(a);
  return next;
}
