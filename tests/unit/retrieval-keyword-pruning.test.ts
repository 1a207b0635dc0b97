import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { B, createKeywordIndex, K1 } from '../../src/retrieval/keyword-index/index.ts';
import { mulberry32 } from '../support/random-vectors.ts';

// The index prunes (MaxScore over windows of chunks); held here to BM25 computed the plain way, every chunk scored
// over every distinct term of the question, on generated corpora: the same chunks, the same order (equal scores in
// insertion order) and the same floats. Corpora are large enough to span several windows, small in vocabulary and
// lengths so that equal scores are common, and skewed so that some terms are in most chunks and some in few.

type Doc = { id: string; terms: string[]; words: number };

function exhaustive(docs: readonly Doc[], question: readonly string[], k: number, allow: (id: string) => boolean = () => true) {
  const n = docs.length;
  const avg = docs.reduce((s, d) => s + d.words, 0) / n;
  const df = new Map<string, number>();
  for (const d of docs) for (const t of new Set(d.terms)) df.set(t, (df.get(t) ?? 0) + 1);
  const scored = docs.map((d, i) => {
    let score = 0;
    let held = false;
    for (const term of new Set(question)) {
      const tf = d.terms.filter((t) => t === term).length;
      if (tf === 0) continue;
      held = true;
      const idf = Math.log(1 + (n - df.get(term)! + 0.5) / (df.get(term)! + 0.5));
      score += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * d.words) / avg));
    }
    return { i, id: d.id, score, held };
  });
  return scored
    .filter((s) => s.held && allow(s.id))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, k)
    .map(({ id, score }) => ({ id, score }));
}

const corpus = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  chunks: fc.integer({ min: 1, max: 9000 }),
  vocabulary: fc.integer({ min: 2, max: 400 }),
  // how steeply term frequency falls with a term's rank: 0 uniform, 3 a few terms in nearly every chunk
  skew: fc.double({ min: 0, max: 3, noNaN: true }),
  maxTerms: fc.integer({ min: 1, max: 40 }),
  lengths: fc.constantFrom('equal', 'few', 'varied'),
});

type Corpus = typeof corpus extends fc.Arbitrary<infer T> ? T : never;

function generate(c: Corpus): Doc[] {
  const next = mulberry32(c.seed);
  const term = () => `t${Math.floor(c.vocabulary * next() ** (1 + c.skew))}`;
  return Array.from({ length: c.chunks }, (_, i) => {
    const terms = Array.from({ length: 1 + Math.floor(next() * c.maxTerms) }, term);
    const words =
      c.lengths === 'equal'
        ? 50
        : c.lengths === 'few'
          ? terms.length + 10 * Math.floor(next() * 3)
          : terms.length + Math.floor(next() * 200);
    return { id: `c${i}`, terms, words };
  });
}

describe('BM25 top k with pruning', () => {
  it('answers exactly what exhaustive BM25 answers, on generated corpora and questions (seed 16)', () => {
    fc.assert(
      fc.property(corpus, fc.integer({ min: 1, max: 2 ** 31 - 1 }), (c, questionSeed) => {
        const docs = generate(c);
        const index = createKeywordIndex();
        // half now and searched, the rest appended after: the index follows appends
        const half = Math.floor(docs.length / 2);
        const next = mulberry32(questionSeed);
        const question = () =>
          Array.from({ length: 1 + Math.floor(next() * 8) }, () =>
            // mostly the corpus's terms, sometimes repeated, now and then one no chunk holds
            next() < 0.1 ? 'absent' : `t${Math.floor(c.vocabulary * next() ** (1 + c.skew * next()))}`,
          );
        const ks = [1, 3, 10, 50, 200];
        for (const upTo of [half, docs.length]) {
          for (let i = index.size; i < upTo; i++) index.add(docs[i]!.id, { terms: docs[i]!.terms, words: docs[i]!.words });
          if (upTo === 0) continue;
          for (let q = 0; q < 6; q++) {
            const terms = question();
            const k = ks[Math.floor(next() * ks.length)]!;
            expect(index.search(terms, k), `question ${JSON.stringify(terms)}, k ${k}, ${upTo} chunks`).toEqual(
              exhaustive(docs.slice(0, upTo), terms, k),
            );
          }
        }
      }),
      { seed: 16, numRuns: 60, endOnFailure: true },
    );
  });

  it('answers exactly what exhaustive BM25 answers over the chunks a filter allows (seed 34)', () => {
    fc.assert(
      fc.property(corpus, fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.double({ min: 0, max: 1, noNaN: true }), (c, questionSeed, kept) => {
        const docs = generate(c);
        const index = createKeywordIndex();
        for (const d of docs) index.add(d.id, { terms: d.terms, words: d.words });
        const next = mulberry32(questionSeed);
        // a filter keeping about `kept` of the chunks, scattered across windows
        const allowed = new Set(docs.filter(() => next() < kept).map((d) => d.id));
        const allow = (id: string) => allowed.has(id);
        for (let q = 0; q < 4; q++) {
          const terms = Array.from({ length: 1 + Math.floor(next() * 6) }, () => `t${Math.floor(c.vocabulary * next() ** (1 + c.skew))}`);
          const k = [1, 5, 50][q % 3]!;
          expect(index.search(terms, k, allow), `question ${JSON.stringify(terms)}, k ${k}`).toEqual(exhaustive(docs, terms, k, allow));
        }
      }),
      { seed: 34, numRuns: 25, endOnFailure: true },
    );
  });

  it('keeps equal scores in insertion order across windows of chunks', () => {
    // every chunk the same: the k first are the answer, whichever window they fall in
    const index = createKeywordIndex();
    for (let i = 0; i < 20_000; i++) index.add(`c${i}`, { terms: i % 3 === 0 ? ['pump', 'valv'] : ['pump'], words: 10 });
    expect(index.search(['pump', 'valv'], 4).map((h) => h.id)).toEqual(['c0', 'c3', 'c6', 'c9']);
    expect(index.search(['valv', 'pump'], 20_000).map((h) => h.id)).toEqual([
      ...Array.from({ length: 6667 }, (_, i) => `c${3 * i}`),
      ...Array.from({ length: 20_000 }, (_, i) => i).flatMap((i) => (i % 3 === 0 ? [] : [`c${i}`])),
    ]);
  });
});
