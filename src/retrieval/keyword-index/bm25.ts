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
  /**
   * The k best chunks holding at least one of the terms, best first; equal scores in insertion order. With `allow`,
   * only the chunks it accepts are candidates (a query's filter), so the k are the best of those.
   */
  search(terms: readonly string[], k: number, allow?: (id: string) => boolean): KeywordHit[];
}

/**
 * A term's chunks and counts, in insertion order; `impacts` caches each chunk's BM25 contribution for the index
 * size it was computed at (idf and the average length move with every append), so a query only adds numbers, and
 * `maxImpact` is the largest of them: no chunk gains more than that from the term.
 */
type Postings = {
  docs: number[];
  tfs: number[];
  impacts: Float64Array | undefined;
  impactsAt: number;
  maxImpact: number;
  lastDoc: number;
};

// Search is MaxScore (Turtle and Flood, 1995) over windows of chunks. Terms are ordered by their largest
// contribution; once the k-th best score so far (the threshold) is at least the sum of the smallest ones' largest
// contributions, a chunk holding only those cannot enter, so their lists are only looked into for chunks the other
// lists bring. A window's chunks are gathered from the other lists, dropped when even their best case stays at or
// under the threshold, and the rest scored exactly: Σ over the question's distinct terms, in the question's order,
// as every replica adds them. Windows and chunks go in insertion order, so an equal score never displaces an
// earlier chunk. Bounds are sums of floats added in another order than the score's, so each is raised by SLACK
// (far above any rounding error of a sum of so few terms) before it may drop a chunk: pruning never changes an answer.
const WINDOW = 4096;
const SLACK = 1 + 1e-9;

export function createKeywordIndex(): KeywordIndex {
  const ids: string[] = [];
  let lengths = new Float64Array(1024);
  let totalLength = 0;
  const postings = new Map<string, Postings>();
  // per-chunk length normalisation, recomputed after an append changed the average
  let norms = new Float64Array(0);
  let normsFor = -1;
  // a window's partial scores (bounds) and the chunks it touched; search runs to its end without yielding
  const bounds = new Float64Array(WINDOW);
  const touched = new Int32Array(WINDOW);

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
        if (!p) postings.set(term, (p = { docs: [], tfs: [], impacts: undefined, impactsAt: 0, maxImpact: 0, lastDoc: -1 }));
        if (p.lastDoc === doc) {
          p.tfs[p.tfs.length - 1]!++;
        } else {
          p.lastDoc = doc;
          p.docs.push(doc);
          p.tfs.push(1);
        }
      }
    },

    search(terms, k, allow) {
      const n = ids.length;
      if (n === 0 || k < 1) return [];
      const norm = normalisation();
      // the distinct terms the index holds, in the question's order: the order their contributions are added in
      const lists: Postings[] = [];
      for (const term of new Set(terms)) {
        const p = postings.get(term);
        if (p) lists.push((impactsOf(p, n, norm), p));
      }
      const m = lists.length;
      if (m === 0) return [];
      // by largest contribution, smallest first; below[j] bounds what the lists byBound[0..j] can add together
      const byBound = lists.map((_, i) => i).sort((a, b) => lists[a]!.maxImpact - lists[b]!.maxImpact || a - b);
      const below = new Float64Array(m);
      for (let j = 0, sum = 0; j < m; j++) below[j] = (sum += lists[byBound[j]!]!.maxImpact) * SLACK;
      const gathered = new Int32Array(m); // per byBound position: the next posting a window gathers
      const probed = new Int32Array(m); // per question position: where the last look-up stopped
      const best = createTopK(k);
      // byBound[essential..] are gathered; those before it are only looked into
      let essential = 0;
      let threshold = -Infinity;

      const contribution = (q: number, doc: number): number => {
        const p = lists[q]!;
        const at = seek(p.docs, probed[q]!, doc);
        probed[q] = at;
        return p.docs[at] === doc ? p.impacts![at]! : 0;
      };

      while (essential < m) {
        let start = n;
        for (let j = essential; j < m; j++) {
          const docs = lists[byBound[j]!]!.docs;
          if (gathered[j]! < docs.length && docs[gathered[j]!]! < start) start = docs[gathered[j]!]!;
        }
        if (start === n) break;
        const end = start + WINDOW;
        let count = 0;
        for (let j = essential; j < m; j++) {
          const p = lists[byBound[j]!]!;
          const docs = p.docs;
          const impacts = p.impacts!;
          let at = gathered[j]!;
          for (; at < docs.length && docs[at]! < end; at++) {
            const slot = docs[at]! - start;
            if (bounds[slot] === 0) touched[count++] = slot;
            bounds[slot] = bounds[slot]! + impacts[at]!;
          }
          gathered[j] = at;
        }
        const slots = touched.subarray(0, count).sort();
        const looked = essential; // lists gathered in this window: the ones before are looked into
        for (let t = 0; t < count; t++) {
          const slot = slots[t]!;
          const doc = start + slot;
          let bound = bounds[slot]! * SLACK;
          bounds[slot] = 0;
          // a chunk the filter leaves out is no candidate: it neither enters nor raises the threshold
          if (allow && !allow(ids[doc]!)) continue;
          let dropped = false;
          for (let j = looked - 1; j >= 0; j--) {
            if (bound + below[j]! <= threshold) {
              dropped = true;
              break;
            }
            bound += contribution(byBound[j]!, doc) * SLACK;
          }
          if (dropped || bound <= threshold) continue;
          let score = 0;
          for (let q = 0; q < m; q++) score += contribution(q, doc);
          if (!best.offer(score, doc)) continue;
          if (best.full) {
            threshold = best.worst;
            while (essential < m && below[essential]! <= threshold) essential++;
          }
        }
      }
      return best.sorted().map(({ doc, score }) => ({ id: ids[doc]!, score }));
    },
  };
}

/** The first position at or after `from` whose chunk is `doc` or later: galloping, then halving. */
function seek(docs: number[], from: number, doc: number): number {
  let low = from;
  let high = from;
  for (let step = 1; high < docs.length && docs[high]! < doc; step *= 2) {
    low = high + 1;
    high = low + step;
  }
  if (high > docs.length) high = docs.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (docs[mid]! < doc) low = mid + 1;
    else high = mid;
  }
  return low;
}

function impactsOf(p: Postings, n: number, norm: Float64Array): Float64Array {
  if (p.impacts && p.impactsAt === n) return p.impacts;
  const df = p.docs.length;
  const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
  const impacts = p.impacts && p.impacts.length === df ? p.impacts : new Float64Array(df);
  let max = 0;
  for (let i = 0; i < df; i++) {
    const tf = p.tfs[i]!;
    impacts[i] = (idf * tf * (K1 + 1)) / (tf + norm[p.docs[i]!]!);
    if (impacts[i]! > max) max = impacts[i]!;
  }
  p.impacts = impacts;
  p.impactsAt = n;
  p.maxImpact = max;
  return impacts;
}

/** Better first: the higher score, then the earlier chunk. */
const better = (sa: number, da: number, sb: number, db: number) => sa > sb || (sa === sb && da < db);

/** The k best chunks offered, through a heap of k whose root is the worst kept. */
function createTopK(k: number) {
  const docs: number[] = [];
  const scores: number[] = [];
  const worse = (i: number, j: number) => better(scores[j]!, docs[j]!, scores[i]!, docs[i]!);
  const swap = (i: number, j: number) => {
    [docs[i], docs[j]] = [docs[j]!, docs[i]!];
    [scores[i], scores[j]] = [scores[j]!, scores[i]!];
  };
  return {
    get full() {
      return docs.length === k;
    },
    /** The score of the worst kept: what a chunk must beat once the heap is full. */
    get worst() {
      return scores[0]!;
    },
    /** Keeps the chunk if it is among the k best so far; says whether it was kept. */
    offer(score: number, doc: number): boolean {
      if (docs.length < k) {
        docs.push(doc);
        scores.push(score);
        for (let i = docs.length - 1; i > 0; ) {
          const parent = (i - 1) >> 1;
          if (!worse(i, parent)) break;
          swap(i, parent);
          i = parent;
        }
        return true;
      }
      if (!better(score, doc, scores[0]!, docs[0]!)) return false;
      docs[0] = doc;
      scores[0] = score;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < docs.length && worse(l, m)) m = l;
        if (r < docs.length && worse(r, m)) m = r;
        if (m === i) break;
        swap(i, m);
        i = m;
      }
      return true;
    },
    sorted(): { doc: number; score: number }[] {
      return docs.map((doc, i) => ({ doc, score: scores[i]! })).sort((a, b) => (better(a.score, a.doc, b.score, b.doc) ? -1 : 1));
    },
  };
}

function grow<T extends Float64Array>(a: T): T {
  const next = new (a.constructor as new (n: number) => T)(a.length * 2);
  next.set(a);
  return next;
}
