import { describe, expect, it } from 'vitest';
import { analyse, B, createKeywordIndex, K1 } from '../../src/retrieval/keyword-index/index.ts';
import { fuse, ranks } from '../../src/retrieval/fuse.ts';

describe('analyse', () => {
  it.each([
    ['ERR-4471 occurred', ['err-4471', 'err', '4471']],
    ['invoice INV-2026-0042', ['inv-2026-0042', 'inv', '2026', '0042']],
    ['upgrade to v2.3.1', ['v2.3.1']],
    ['the user_id column', ['user_id', 'user', 'id']],
    ['write to ops.team@example.com', ['ops.team@example.com']],
    ['costs 4471 euros', ['4471']],
  ])('keeps the identifiers of %j whole and its parts too', (text, wanted) => {
    expect(analyse(text).terms).toEqual(expect.arrayContaining(wanted));
  });

  it('stems English and French in the language of the text, drops its stop words and accents', () => {
    expect(analyse('The invoices were running late').terms).toEqual(['invoic', 'run', 'late']);
    expect(analyse('Les factures impayées sont en retard').terms).toEqual(['factur', 'impai', 'retard']);
    // a question without stop words is stemmed both ways, so it meets chunks of either language
    expect(analyse('factures').terms).toEqual(expect.arrayContaining(['factur']));
    expect(analyse('résumé').terms).toEqual(analyse('resume').terms);
  });

  it('counts every word read as the length, stop words included', () => {
    expect(analyse('the cat and the hat').words).toBe(5);
  });
});

describe('BM25 index', () => {
  const docs = [
    'the disk quota is exceeded error ERR-4470',
    'ERR-4471 replication slot full',
    'error error error handling guide for every error',
    'bread flour water yeast salt',
    'replication replication lag',
  ];

  /** BM25 written the plain way, term by term over every document, to hold the index to. */
  function reference(question: string) {
    const analysed = docs.map((d) => analyse(d));
    const avg = analysed.reduce((s, a) => s + a.words, 0) / docs.length;
    const scores = analysed.map((a) => {
      let score = 0;
      for (const term of new Set(analyse(question).terms)) {
        const tf = a.terms.filter((t) => t === term).length;
        if (tf === 0) continue;
        const df = analysed.filter((o) => o.terms.includes(term)).length;
        const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
        score += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * a.words) / avg));
      }
      return score;
    });
    return scores
      .map((score, i) => ({ id: `d${i}`, score }))
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score || Number(a.id.slice(1)) - Number(b.id.slice(1)));
  }

  it.each(['ERR-4471', 'replication error', 'error', 'salt and yeast', 'nothing matches this'])(
    'scores %j as BM25 does (k1 1.2, b 0.75)',
    (q) => {
      const index = createKeywordIndex();
      docs.forEach((d, i) => {
        index.add(`d${i}`, analyse(d));
      });
      const got = index.search(analyse(q).terms, 10);
      const want = reference(q);
      expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
      got.forEach((h, i) => {
        expect(h.score).toBeCloseTo(want[i]!.score, 10);
      });
    },
  );

  it('answers the k best, equal scores in insertion order, and follows appends', () => {
    const index = createKeywordIndex();
    for (let i = 0; i < 100; i++) index.add(`c${i}`, analyse(i % 10 === 0 ? 'pump valve' : 'pump'));
    expect(index.search(['valv'], 3).map((h) => h.id)).toEqual(['c0', 'c10', 'c20']);
    expect(index.search(['pump'], 100)).toHaveLength(100);
    index.add('late', analyse('valve valve valve'));
    expect(index.search(['valv'], 1)[0]!.id).toBe('late');
  });
});

describe('reciprocal rank fusion', () => {
  it('shares ranks between equal scores', () => {
    expect(
      ranks([
        { id: 'a', score: 3 },
        { id: 'b', score: 2 },
        { id: 'c', score: 2 },
        { id: 'd', score: 1 },
      ]),
    ).toEqual([1, 2, 2, 4]);
  });

  it('sums 1/(60 + rank) over both lists and breaks ties by the dense order', () => {
    const fused = fuse(
      [
        { id: 'a', score: 0.9 },
        { id: 'b', score: 0.8 },
        { id: 'c', score: 0.7 },
      ],
      [
        { id: 'c', score: 5 },
        { id: 'x', score: 4 },
      ],
      10,
    );
    expect(fused).toEqual([
      { id: 'c', score: 1 / 63 + 1 / 61, dense_rank: 3, keyword_rank: 1 },
      { id: 'a', score: 1 / 61, dense_rank: 1, keyword_rank: null },
      { id: 'b', score: 1 / 62, dense_rank: 2, keyword_rank: null },
      { id: 'x', score: 1 / 62, dense_rank: null, keyword_rank: 2 },
    ]);
  });
});
