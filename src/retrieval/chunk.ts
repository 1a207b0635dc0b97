// Word-window chunking across a whole document: windows of `size` words, each starting `size - overlap` words
// after the previous one, words being runs of non-whitespace and a chunk's text its words joined by one space.
// A chunk keeps the page of its first word, so the page in a query result is where the passage starts. The last
// window is not added when the previous one already reaches the end.
//
// A chunk is also bounded in characters (`maxChars`), so a text without spaces cannot become one 20 MB chunk that
// no embedding model reads: a word longer than the bound is split into pieces of at most `maxChars` characters,
// and a window stops early when its next word would take it past the bound. A window cut short by characters
// overlaps the next one in proportion (w words overlap floor(w × overlap / size)), so the usual window is unchanged.
//
// For speed on long documents (a 1000-page PDF is about half a million words) the text is normalised once and a
// chunk is a slice of it, its bounds found by walking spaces with indexOf; no array of every word is built.
export type Page = { page: number; text: string };
export type Chunk = { index: number; page: number; text: string };

export function chunkPages(pages: readonly Page[], opts: { size: number; overlap: number; maxChars?: number }): Chunk[] {
  const { size, overlap } = opts;
  const maxChars = opts.maxChars ?? Number.MAX_SAFE_INTEGER;
  if (!(Number.isInteger(size) && size > 0)) throw new RangeError(`chunk size must be a positive integer (got ${size})`);
  if (!(Number.isInteger(overlap) && overlap >= 0 && overlap < size)) {
    throw new RangeError(`chunk overlap must be a non-negative integer smaller than the chunk size ${size} (got ${overlap})`);
  }
  if (!(Number.isInteger(maxChars) && maxChars >= 2))
    throw new RangeError(`chunk character limit must be an integer of at least 2 (got ${maxChars})`);

  // the document as one string of words separated by single spaces, and where each page starts in it
  const parts: string[] = [];
  const pageStart: number[] = [];
  const pageNumber: number[] = [];
  let offset = 0;
  for (const { page, text } of pages) {
    const words = splitLongWords(text.replace(/\s+/g, ' ').trim(), maxChars);
    if (!words) continue;
    pageStart.push(offset);
    pageNumber.push(page);
    parts.push(words);
    offset += words.length + 1;
  }
  const doc = parts.join(' ');

  const chunks: Chunk[] = [];
  const starts: number[] = []; // word starts of the current window
  let p = 0;
  for (let start = 0; start < doc.length; ) {
    while (p + 1 < pageStart.length && pageStart[p + 1]! <= start) p++;
    // take words while the window has fewer than `size` and the next one still fits in `maxChars`
    starts.length = 0;
    let end = start;
    let at = start;
    while (starts.length < size && at < doc.length) {
      const space = doc.indexOf(' ', at);
      const wordEnd = space < 0 ? doc.length : space;
      if (starts.length > 0 && wordEnd - start > maxChars) break;
      starts.push(at);
      end = wordEnd;
      at = wordEnd + 1;
    }
    chunks.push({ index: chunks.length, page: pageNumber[p]!, text: doc.slice(start, end) });
    if (end === doc.length) break;
    const taken = starts.length;
    const back = taken === size ? overlap : Math.floor((taken * overlap) / size);
    start = starts[Math.max(1, taken - back)] ?? at;
  }
  return chunks;
}

/** Words of a normalised text (single spaces) longer than `maxChars` split by spaces into pieces, never inside a surrogate pair. */
function splitLongWords(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let out = ''; // built only once a long word turns up
  let copied = 0; // text before this offset is in `out`
  for (let from = 0; from < text.length; ) {
    const space = text.indexOf(' ', from);
    const end = space < 0 ? text.length : space;
    if (end - from > maxChars) {
      out += text.slice(copied, from);
      for (let at = from; at < end; ) {
        let cut = Math.min(at + maxChars, end);
        const last = text.charCodeAt(cut - 1);
        if (cut < end && last >= 0xd800 && last <= 0xdbff) cut--; // a high surrogate stays with its low half
        out += (at > from ? ' ' : '') + text.slice(at, cut);
        at = cut;
      }
      copied = end;
    }
    from = end + 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}
