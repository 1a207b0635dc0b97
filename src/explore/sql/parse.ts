import type { ParseError } from 'dt-sql-parser';
import type { ProgramContext } from 'dt-sql-parser/dist/lib/trino/TrinoSqlParser';
// The Trino grammar alone: the package's index loads the grammars of eight dialects (60 MB of heap against 7).
import { TrinoSQL } from 'dt-sql-parser/dist/parser/trino';

// One parse of a text with dt-sql-parser's Trino grammar (the grammar of Trino's own SqlBase.g4): the tree, every
// token (hidden comments and spaces included) and the syntax errors. The parser runs in ANTLR's fast SLL mode; only
// when that reports an error is the text parsed again in full LL mode, so a rare SLL false alarm never refuses a
// valid statement.

export type Token = { type: number; text: string | undefined; start: number; stop: number; channel: number; line: number; column: number };
export type Parsed = { tree: ProgramContext; tokens: Token[]; errors: ParseError[]; symbolOf: (type: number) => string };

const trino = new TrinoSQL();
const LL = 1; // antlr4ng PredictionMode.LL (antlr4ng is dt-sql-parser's own dependency, not ours)

export function parseTrino(sql: string): Parsed {
  const first = attempt(sql, false);
  return first.errors.length === 0 ? first : attempt(sql, true);
}

function attempt(sql: string, fullContext: boolean): Parsed {
  const errors: ParseError[] = [];
  const parser = trino.createParser(sql, (e) => errors.push(e));
  if (fullContext) (parser.interpreter as { predictionMode: number }).predictionMode = LL;
  const tree = parser.program();
  const tokens = (parser.tokenStream as unknown as { getTokens(): Token[] }).getTokens();
  const vocabulary = parser.vocabulary;
  return { tree, tokens, errors, symbolOf: (type) => vocabulary.getSymbolicName(type) ?? '' };
}

export type Lexed = { tokens: Token[]; symbolOf: (type: number) => string };

/** The lexer alone, every channel (comments and spaces included): linear, before any parse is attempted. */
export function lexTrino(sql: string): Lexed {
  const lexer = trino.createLexer(sql);
  const tokens = lexer.getAllTokens() as unknown as Token[];
  const vocabulary = lexer.vocabulary;
  return { tokens, symbolOf: (type) => vocabulary.getSymbolicName(type) ?? '' };
}

/** How deeply parentheses, brackets and CASE nest. */
export function nestingDepth({ tokens, symbolOf }: Lexed): number {
  let depth = 0;
  let deepest = 0;
  for (const token of tokens) {
    const opens = token.text === '(' || token.text === '[' || symbolOf(token.type) === 'KW_CASE';
    if (opens) deepest = Math.max(deepest, ++depth);
    else if (token.text === ')' || token.text === ']' || symbolOf(token.type) === 'KW_END') depth--;
  }
  return deepest;
}

/**
 * ANTLR positions count code points; JavaScript strings count UTF-16 units. This maps a token's code-point offset
 * to a string index, so text outside the Basic Multilingual Plane (an emoji in a literal) never shifts an edit.
 */
export function stringIndex(sql: string): (codePoint: number) => number {
  if (!/[\uD800-\uDFFF]/.test(sql)) return (i) => i;
  const index: number[] = [];
  let unit = 0;
  for (const ch of sql) {
    index.push(unit);
    unit += ch.length;
  }
  index.push(unit);
  return (i) => index[Math.min(i, index.length - 1)]!;
}
