import { invalidParameter } from '../errors.ts';

// The tokens of MLflow's search grammar. An identifier is lexed whole, dots and quoted parts included
// (metrics.acc, tags.mlflow.runName, metrics."my metric", metrics.'my metric', metrics.`a b`, `run name`), so the
// parser sees one token per side of a comparison. Keywords are recognised only as a single unquoted word,
// case-insensitively.

export type IdentifierPart = { text: string; quoted: boolean };

export type Token =
  | { kind: 'identifier'; parts: IdentifierPart[]; text: string; at: number }
  | { kind: 'keyword'; word: Keyword; text: string; at: number }
  | { kind: 'number'; value: number; text: string; at: number }
  | { kind: 'string'; value: string; text: string; at: number }
  | { kind: 'operator'; text: string; at: number }
  | { kind: 'punctuation'; text: '(' | ')' | ','; at: number }
  | { kind: 'end'; text: ''; at: number };

const KEYWORDS = ['AND', 'OR', 'NOT', 'IN', 'LIKE', 'ILIKE', 'IS', 'NULL', 'ASC', 'DESC'] as const;
export type Keyword = (typeof KEYWORDS)[number];

const OPERATORS = ['!=', '<>', '<=', '>=', '==', '=', '<', '>'];
const NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/;
const WORD_START = /[\p{L}_]/u;
const WORD = /^[\p{L}\p{N}_]+/u;

/** Splits a filter or order_by string into tokens; the last token is always `end`. */
export function tokenize(source: string, what = 'filter'): Token[] {
  return [...tokens(source, what)];
}

/**
 * The tokens one at a time, as the parser asks for them: a filter refused early (past the clause limit) is not
 * read to its end, however long the string.
 */
export function* tokens(source: string, what = 'filter'): Generator<Token, void, undefined> {
  let i = 0;
  const fail = (message: string): never => {
    throw invalidParameter(`Invalid ${what} '${source}': ${message} at position ${i + 1}.`);
  };

  // A quoted run of text; the quote is doubled or backslash-escaped inside it.
  const quoted = (quote: string): string => {
    let value = '';
    let j = i + 1;
    for (;;) {
      const ch = source[j];
      if (ch === undefined) return fail(`unterminated ${quote} quote`);
      if (ch === '\\' && source[j + 1] === quote) {
        value += quote;
        j += 2;
      } else if (ch === quote && source[j + 1] === quote) {
        value += quote;
        j += 2;
      } else if (ch === quote) {
        i = j + 1;
        return value;
      } else {
        value += ch;
        j += 1;
      }
    }
  };

  const identifier = (): Token => {
    const at = i;
    const parts: IdentifierPart[] = [];
    const part = (first: boolean): void => {
      const ch = source[i];
      if (ch === '`') parts.push({ text: quoted('`'), quoted: true });
      else if ((ch === '"' || ch === "'") && !first) parts.push({ text: quoted(ch), quoted: true });
      else {
        const word = WORD.exec(source.slice(i))?.[0];
        if (!word || (first && !WORD_START.test(word[0]!))) fail(`expected a name after '.'`);
        parts.push({ text: word!, quoted: false });
        i += word!.length;
      }
    };
    part(true);
    while (source[i] === '.') {
      i += 1;
      part(false);
    }
    const text = source.slice(at, i);
    const only = parts.length === 1 ? parts[0]! : undefined;
    const upper = only && !only.quoted ? only.text.toUpperCase() : '';
    if ((KEYWORDS as readonly string[]).includes(upper)) return { kind: 'keyword', word: upper as Keyword, text, at };
    return { kind: 'identifier', parts, text, at };
  };

  while (i < source.length) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      i += 1;
      continue;
    }
    const at = i;
    if (ch === "'" || ch === '"') {
      const value = quoted(ch);
      yield { kind: 'string', value, text: source.slice(at, i), at };
      continue;
    }
    if (ch === '`' || WORD_START.test(ch)) {
      yield identifier();
      continue;
    }
    const number = NUMBER.exec(source.slice(i))?.[0];
    if (number) {
      i += number.length;
      if (WORD_START.test(source[i] ?? '')) fail(`unexpected '${source[i]}' after the number ${number}`);
      yield { kind: 'number', value: Number(number), text: number, at };
      continue;
    }
    const operator = OPERATORS.find((op) => source.startsWith(op, i));
    if (operator) {
      i += operator.length;
      yield { kind: 'operator', text: operator, at };
      continue;
    }
    if (ch === '(' || ch === ')' || ch === ',') {
      i += 1;
      yield { kind: 'punctuation', text: ch, at };
      continue;
    }
    fail(`unexpected '${ch}' (quote names with special characters: metrics.\`my-metric\`)`);
  }
  yield { kind: 'end', text: '', at: source.length };
}
