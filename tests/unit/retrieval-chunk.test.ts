import { describe, expect, it } from 'vitest';
import { chunkPages } from '../../src/retrieval/chunk.ts';

const words = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `w${from + i}`).join(' ');

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
    const chunks = chunkPages([{ page: 1, text: '' }, { page: 2, text: 'alpha beta' }], { size: 5, overlap: 0 });
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
});
