import { describe, expect, it } from 'vitest';
import { chunkPages, type Page } from '../../src/retrieval/chunk.ts';
import { loadRetrievalConfig } from '../../src/retrieval/config.ts';

const words = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `w${from + i}`).join(' ');

/** The definition, written plainly: every word with its page, windows of `size` stepping by `size - overlap`. */
function reference(pages: Page[], size: number, overlap: number) {
  const all = pages.flatMap((p) =>
    p.text
      .split(/\s+/)
      .filter(Boolean)
      .map((word) => ({ word, page: p.page })),
  );
  const out: { index: number; page: number; text: string }[] = [];
  for (let start = 0; start < all.length; start += size - overlap) {
    const window = all.slice(start, start + size);
    out.push({ index: out.length, page: window[0]!.page, text: window.map((w) => w.word).join(' ') });
    if (start + size >= all.length) break;
  }
  return out;
}

/** A deterministic pseudo-random source, so a failure can be replayed. */
function random(seed: number) {
  return () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

describe('chunkPages', () => {
  it('windows words with the given overlap', () => {
    const chunks = chunkPages([{ page: 1, text: words(0, 10) }], { size: 4, overlap: 1 });
    expect(chunks.map((c) => c.text)).toEqual(['w0 w1 w2 w3', 'w3 w4 w5 w6', 'w6 w7 w8 w9']);
    expect(chunks.map((c) => c.index)).toEqual([0, 1, 2]);
  });

  it('keeps the page of the first word of each chunk', () => {
    const chunks = chunkPages(
      [
        { page: 1, text: words(0, 3) },
        { page: 2, text: words(3, 5) },
        { page: 3, text: words(5, 9) },
      ],
      { size: 3, overlap: 1 },
    );
    expect(chunks.map((c) => [c.page, c.text])).toEqual([
      [1, 'w0 w1 w2'],
      [1, 'w2 w3 w4'],
      [2, 'w4 w5 w6'],
      [3, 'w6 w7 w8'],
    ]);
  });

  it('does not add a final window that the previous one covers', () => {
    expect(chunkPages([{ page: 1, text: words(0, 7) }], { size: 4, overlap: 1 }).map((c) => c.text)).toEqual([
      'w0 w1 w2 w3',
      'w3 w4 w5 w6',
    ]);
  });

  it('handles empty text, whitespace and fewer words than a window', () => {
    expect(chunkPages([], { size: 400, overlap: 60 })).toEqual([]);
    expect(chunkPages([{ page: 1, text: ' \n\t ' }], { size: 400, overlap: 60 })).toEqual([]);
    expect(chunkPages([{ page: 4, text: '  one\ntwo  ' }], { size: 400, overlap: 60 })).toEqual([{ index: 0, page: 4, text: 'one two' }]);
  });

  it('skips pages without words when assigning pages', () => {
    const chunks = chunkPages(
      [
        { page: 1, text: '' },
        { page: 2, text: 'alpha beta' },
      ],
      { size: 5, overlap: 0 },
    );
    expect(chunks).toEqual([{ index: 0, page: 2, text: 'alpha beta' }]);
  });

  it('rejects an overlap not smaller than the window', () => {
    expect(() => chunkPages([], { size: 4, overlap: 4 })).toThrow(RangeError);
    expect(() => chunkPages([], { size: 0, overlap: 0 })).toThrow(RangeError);
  });

  it('chunks with the default window: 400 words, 60 overlap', () => {
    const chunks = chunkPages([{ page: 1, text: words(0, 1000) }], { size: 400, overlap: 60 });
    expect(chunks.map((c) => c.text.split(' ')[0])).toEqual(['w0', 'w340', 'w680']);
    expect(chunks.at(-1)!.text.split(' ').at(-1)).toBe('w999');
  });

  it('rejects a window or overlap that is not a whole number', () => {
    expect(() => chunkPages([], { size: 4.5, overlap: 1 })).toThrow(RangeError);
    expect(() => chunkPages([], { size: 4, overlap: -1 })).toThrow(RangeError);
    expect(() => chunkPages([], { size: 4, overlap: 0.5 })).toThrow(/overlap/);
  });

  it('splits on any whitespace, Unicode spaces included, and keeps punctuation with its word', () => {
    const chunks = chunkPages([{ page: 1, text: 'Fish,\u00a0chips\t& peas.\r\n(Today)\u2003only' }], { size: 3, overlap: 0 });
    expect(chunks.map((c) => c.text)).toEqual(['Fish, chips &', 'peas. (Today) only']);
  });

  it('gives a window that starts in an overlap the page of its own first word', () => {
    const chunks = chunkPages(
      [
        { page: 7, text: words(0, 4) },
        { page: 8, text: words(4, 6) },
      ],
      { size: 4, overlap: 2 },
    );
    expect(chunks.map((c) => [c.page, c.text])).toEqual([
      [7, 'w0 w1 w2 w3'],
      [7, 'w2 w3 w4 w5'],
    ]);
  });

  it('matches the plain definition on many random documents and settings', () => {
    const next = random(42);
    const spaces = [' ', '  ', '\n', '\t', ' \n\n ', '\u00a0'];
    for (let round = 0; round < 300; round++) {
      const pages: Page[] = Array.from({ length: Math.floor(next() * 6) }, (_, p) => ({
        page: p + 1,
        text: Array.from({ length: Math.floor(next() * 25) }, (_, i) => `p${p}w${i}${spaces[Math.floor(next() * spaces.length)]}`).join(
          next() < 0.5 ? '' : ' ',
        ),
      }));
      const size = 1 + Math.floor(next() * 12);
      const overlap = Math.floor(next() * size);
      expect(chunkPages(pages, { size, overlap }), `round ${round}: size ${size}, overlap ${overlap}`).toEqual(
        reference(pages, size, overlap),
      );
    }
  });

  it('chunks a 1000-page document: every window full but the last, pages of first words, nothing lost', () => {
    const pages = Array.from({ length: 1000 }, (_, p) => ({ page: p + 1, text: words(p * 500, (p + 1) * 500) }));
    const chunks = chunkPages(pages, { size: 400, overlap: 60 });
    expect(chunks).toHaveLength(Math.ceil((500_000 - 400) / 340) + 1);
    chunks.forEach((c, i) => {
      const first = i * 340;
      expect(c.text.startsWith(`w${first} `)).toBe(true);
      expect(c.page).toBe(Math.floor(first / 500) + 1);
    });
    expect(chunks.slice(0, -1).every((c) => c.text.split(' ').length === 400)).toBe(true);
    expect(chunks.at(-1)!.text.endsWith('w499999')).toBe(true);
  });

  describe('with a character limit', () => {
    it('splits a word longer than the limit into pieces of at most the limit, losing nothing', () => {
      const word = 'x'.repeat(2500);
      const chunks = chunkPages([{ page: 3, text: `alpha ${word} omega` }], { size: 400, overlap: 60, maxChars: 1000 });
      expect(chunks.map((c) => c.text.length)).toEqual([5, 1000, 1000, 500 + 6]);
      expect(chunks.map((c) => c.text).join(' ')).toBe(`alpha ${'x'.repeat(1000)} ${'x'.repeat(1000)} ${'x'.repeat(500)} omega`);
      expect(chunks.every((c) => c.page === 3)).toBe(true);
    });

    it('never splits a surrogate pair', () => {
      const chunks = chunkPages([{ page: 1, text: '😀'.repeat(5) }], { size: 10, overlap: 2, maxChars: 3 });
      expect(chunks.map((c) => c.text)).toEqual(Array(5).fill('😀'));
    });

    it('ends a window early when the next word would pass the limit, overlapping in proportion', () => {
      const text = Array.from({ length: 20 }, (_, i) => `word${String(i).padStart(2, '0')}`).join(' '); // 6 characters a word
      const chunks = chunkPages([{ page: 1, text }], { size: 10, overlap: 4, maxChars: 20 });
      // 3 words fit in 20 characters; 3 of 10 words overlap 4 * 3 / 10 = 1 word
      expect(chunks[0]!.text).toBe('word00 word01 word02');
      expect(chunks[1]!.text).toBe('word02 word03 word04');
      expect(chunks.every((c) => c.text.length <= 20)).toBe(true);
      expect(chunks.at(-1)!.text.endsWith('word19')).toBe(true);
    });

    it('leaves windows of ordinary words alone', () => {
      const pages = [{ page: 1, text: words(0, 1000) }];
      expect(chunkPages(pages, { size: 400, overlap: 60, maxChars: 4800 })).toEqual(chunkPages(pages, { size: 400, overlap: 60 }));
    });

    it('keeps a 20 MB word to chunks of the limit', () => {
      const chunks = chunkPages([{ page: 1, text: 'y'.repeat(20_000_000) }], { size: 400, overlap: 60, maxChars: 4800 });
      expect(chunks).toHaveLength(Math.ceil(20_000_000 / 4800));
      expect(Math.max(...chunks.map((c) => c.text.length))).toBe(4800);
    });

    it('rejects a limit below 2', () => {
      expect(() => chunkPages([], { size: 4, overlap: 1, maxChars: 1 })).toThrow(/character limit/);
    });
  });

  it('takes SVC_CHUNK_MAX_CHARS, or 12 characters a word of the window, and refuses a limit below 16', () => {
    expect(loadRetrievalConfig({}).CHUNK_MAX_CHARS).toBe(4800);
    expect(loadRetrievalConfig({ SVC_CHUNK_SIZE_TOKENS: '100', SVC_CHUNK_OVERLAP_TOKENS: '10' }).CHUNK_MAX_CHARS).toBe(1200);
    expect(loadRetrievalConfig({ SVC_CHUNK_MAX_CHARS: '2000' }).CHUNK_MAX_CHARS).toBe(2000);
    expect(() => loadRetrievalConfig({ SVC_CHUNK_MAX_CHARS: '8' })).toThrow(/SVC_CHUNK_MAX_CHARS="8": expected an integer >= 16/);
    expect(() => loadRetrievalConfig({ SVC_CHUNK_MAX_CHARS: 'lots' })).toThrow(/SVC_CHUNK_MAX_CHARS/);
  });
});
