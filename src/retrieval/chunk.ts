// Word-window chunking across a whole document. Each chunk keeps the page of its first word, so the page in a
// query result is where the passage starts.
export type Page = { page: number; text: string };
export type Chunk = { index: number; page: number; text: string };

export function chunkPages(pages: readonly Page[], opts: { size: number; overlap: number }): Chunk[] {
  const { size, overlap } = opts;
  if (!(Number.isInteger(size) && size > 0)) throw new RangeError('chunk size must be a positive integer');
  if (!(Number.isInteger(overlap) && overlap >= 0 && overlap < size)) {
    throw new RangeError('chunk overlap must be a non-negative integer smaller than the chunk size');
  }
  const words: string[] = [];
  const wordPages: number[] = [];
  for (const { page, text } of pages) {
    for (const word of text.split(/\s+/)) {
      if (word) {
        words.push(word);
        wordPages.push(page);
      }
    }
  }
  const chunks: Chunk[] = [];
  const step = size - overlap;
  for (let start = 0; start < words.length; start += step) {
    const end = Math.min(start + size, words.length);
    chunks.push({ index: chunks.length, page: wordPages[start]!, text: words.slice(start, end).join(' ') });
    if (end === words.length) break; // the rest is already covered by this window
  }
  return chunks;
}
