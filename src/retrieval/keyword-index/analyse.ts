import { detectLanguages, fold, isStopWord, stem, type Language } from './languages.ts';

// Text to search terms, the same for a chunk and a question. Words are lower-cased, stop words dropped, stemmed
// in the text's language (English, French, or both when the text does not say) and stripped of accents. A token
// joined by - _ . @ / or : ("ERR-4471", "INV-2026-0042", "v2.3.1", "user_id", "ops@example.com", "2026-11-24")
// is kept whole as well as split into its words, and anything holding a digit is kept as written: an identifier
// or a number matches only itself, and ranks high because it is rare.

export type Analysed = {
  /** Terms in text order, repeated as often as they occur. */
  terms: string[];
  /** Words read (stop words included): the document length of BM25. */
  words: number;
};

const TOKEN = /[\p{L}\p{M}\p{N}]+(?:[-_.@/:][\p{L}\p{M}\p{N}]+)*/gu;
const PART = /[\p{L}\p{M}\p{N}]+/gu;
const DIGIT = /\p{N}/u;
const JOINED = /[-_.@/:]/;
/** Longer tokens (a hash is 64) are noise to a keyword search: split into words, never kept whole. */
const MAX_TERM = 128;

export function analyse(text: string): Analysed {
  const tokens = text.normalize('NFC').toLowerCase().match(TOKEN) ?? [];
  const languages = detectLanguages(tokens);
  const terms: string[] = [];
  let words = 0;
  for (const token of tokens) {
    if (!JOINED.test(token)) {
      words++;
      addWord(token, languages, terms);
      continue;
    }
    if (token.length <= MAX_TERM) terms.push(fold(token));
    for (const part of token.match(PART)!) {
      words++;
      addWord(part, languages, terms);
    }
  }
  return { terms, words };
}

function addWord(word: string, languages: readonly Language[], out: string[]): void {
  const memo = WORDS[languages.length === 2 ? 'both' : languages[0]!];
  let terms = memo.get(word);
  if (terms === undefined) {
    terms = wordTerms(word, languages);
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(word, terms);
  }
  for (const t of terms) out.push(t);
}

// A text repeats its words: each word's terms are worked out once per language setting.
const MEMO_LIMIT = 200_000;
const WORDS: Record<Language | 'both', Map<string, readonly string[]>> = { en: new Map(), fr: new Map(), both: new Map() };

function wordTerms(word: string, languages: readonly Language[]): readonly string[] {
  if (word.length > MAX_TERM) return [];
  if (DIGIT.test(word)) return [fold(word)];
  // single letters are elisions (l', d', qu'), initials and list markers
  if (word.length < 2 || isStopWord(word, languages)) return [];
  const first = stem(word, languages[0]!);
  const second = languages.length === 2 ? stem(word, languages[1]!) : first;
  return second === first ? [first] : [first, second];
}
