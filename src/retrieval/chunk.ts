// Word-window chunking across a whole document: windows of `size` words, each starting `size - overlap` words
// after the previous one, words being runs of non-whitespace and a chunk's text its words joined by one space.
// A chunk keeps the page of its first word, so the page in a query result is where the passage starts. The last
// window is not added when the previous one already reaches the end.
//
// For speed on long documents (a 1000-page PDF is about half a million words) the text is normalised once and a
// chunk is a slice of it, its bounds found by a sticky regular expression that skips n words natively, rather
// than an array of half a million words joined again.
export type Page = { page: number; text: string };
export type Chunk = { index: number; page: number; text: string };

export function chunkPages(pages: readonly Page[], opts: { size: number; overlap: number }): Chunk[] {
  const { size, overlap } = opts;
  if (!(Number.isInteger(size) && size > 0)) throw new RangeError(`chunk size must be a positive integer (got ${size})`);
  if (!(Number.isInteger(overlap) && overlap >= 0 && overlap < size)) {
    throw new RangeError(`chunk overlap must be a non-negative integer smaller than the chunk size ${size} (got ${overlap})`);
  }

  // the document as one string of words separated by single spaces, and where each page starts in it
  const parts: string[] = [];
  const pageStart: number[] = [];
  const pageNumber: number[] = [];
  let offset = 0;
  for (const { page, text } of pages) {
    const words = text.replace(/\s+/g, ' ').trim();
    if (!words) continue;
    pageStart.push(offset);
    pageNumber.push(page);
    parts.push(words);
    offset += words.length + 1;
  }
  const doc = parts.join(' ');

  // the regular expression engine walks `n` words at a time: a window is `size` words, the next starts `step` later
  const words = (n: number) => new RegExp(`(?:[^ ]+ ){${n}}`, 'y');
  const window = words(size);
  const advance = words(size - overlap);
  const chunks: Chunk[] = [];
  let p = 0;
  for (let start = 0; start < doc.length; ) {
    while (p + 1 < pageStart.length && pageStart[p + 1]! <= start) p++;
    window.lastIndex = start;
    // no match: fewer than size + 1 words are left, so this window reaches the end and is the last
    const end = window.test(doc) ? window.lastIndex - 1 : doc.length;
    chunks.push({ index: chunks.length, page: pageNumber[p]!, text: doc.slice(start, end) });
    if (end === doc.length) break;
    advance.lastIndex = start;
    advance.test(doc);
    start = advance.lastIndex;
  }
  return chunks;
}
