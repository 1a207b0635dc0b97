/// <reference path="./snowball-stemmers.d.ts" />
import { stopwords as englishStops } from '@orama/stopwords/english';
import { stopwords as frenchStops } from '@orama/stopwords/french';
import snowball from 'snowball-stemmers';

// English and French, the OCR languages: Snowball's stemmers (English is Porter2) and Snowball's stop-word lists.

export type Language = 'en' | 'fr';

const STOPS: Record<Language, ReadonlySet<string>> = {
  en: new Set(englishStops.filter(Boolean)),
  fr: new Set(frenchStops.filter(Boolean)),
};
// Which list a stop word is in; words in both ("on", "a") say nothing about the language.
const STOP_LANGUAGE = new Map<string, Language | 'both'>();
for (const w of STOPS.en) STOP_LANGUAGE.set(w, 'en');
for (const w of STOPS.fr) STOP_LANGUAGE.set(w, STOP_LANGUAGE.has(w) ? 'both' : 'fr');

export const isStopWord = (word: string, languages: readonly Language[]) => languages.some((l) => STOPS[l].has(word));

/**
 * The languages a text is written in, by counting its stop words: the one with more, or both when they tie (a
 * short question, a table of figures), so such a text is stemmed both ways and still meets either kind of chunk.
 */
export function detectLanguages(words: readonly string[]): Language[] {
  let en = 0;
  let fr = 0;
  for (const w of words) {
    const l = STOP_LANGUAGE.get(w);
    if (l === 'en') en++;
    else if (l === 'fr') fr++;
  }
  return en > fr ? ['en'] : fr > en ? ['fr'] : ['en', 'fr'];
}

// The Snowball port costs microseconds a word; a text repeats its vocabulary, so each stem is computed once.
const MEMO_LIMIT = 200_000;
const stemmers = { en: snowball.newStemmer('english'), fr: snowball.newStemmer('french') };
const memo: Record<Language, Map<string, string>> = { en: new Map(), fr: new Map() };

export function stem(word: string, language: Language): string {
  const held = memo[language];
  let out = held.get(word);
  if (out === undefined) {
    // English's stemmer reads ASCII, so accents go first; French's reads them, so they go after
    out = language === 'en' ? stemmers.en.stem(fold(word)) : fold(stemmers.fr.stem(word));
    if (held.size >= MEMO_LIMIT) held.clear();
    held.set(word, out);
  }
  return out;
}

/** Accents off, so "resume" finds "résumé". */
export const fold = (s: string) => (/[^\x00-\x7f]/.test(s) ? s.normalize('NFD').replace(/\p{M}+/gu, '') : s);
