import type { Lexed } from './parse.ts';

// The engine must run the statement the validator read, not a text that another lexer may read differently.
// Postgres nests block comments and Trino does not; Postgres reads `e'\''` as one escaped string and Trino as a
// name and a string. So the model's text is never executed: its tokens are printed back in one canonical form and
// that form is what validation parses and the engine runs.
//
// - Comments are gone. The whitespace between two tokens is kept when it is only whitespace (so the model's lines
//   stay lines); a gap that held a comment becomes one space, or one line break if it spanned lines.
// - Two tokens the model wrote with nothing between them stay glued only where no lexer can read the pair as
//   something else (before `,` `)` `]` `;`, after `(` `[`, a name and its `.`, `(` or `[`); anywhere else a space goes
//   between them, so `e'\'` becomes `e '\'` in both dialects.
// - Names are printed in lower case, quoted ones inside their quotes: Trino compares names case-insensitively,
//   Postgres compares quoted names exactly, so `"Customer"` could otherwise be a CTE to the validator and the base
//   table to the embedded engine.

const NAME = new Set(['IDENTIFIER', 'QUOTED_IDENTIFIER']);

export function canonicalSql(lexed: Lexed): string {
  const { tokens, symbolOf } = lexed;
  let out = '';
  let gap: string | undefined; // the hidden text since the last token, undefined when there was none
  let previous: { text: string; symbol: string } | undefined;
  for (const token of tokens) {
    const symbol = symbolOf(token.type);
    if (symbol === 'EOF') break;
    if (token.channel !== 0) {
      gap = (gap ?? '') + (token.text ?? '');
      continue;
    }
    const text = printed(token.text ?? '', symbol);
    if (previous) out += gap === undefined ? (glued(previous, { text, symbol }) ? '' : ' ') : separator(gap);
    out += text;
    previous = { text, symbol };
    gap = undefined;
  }
  return out.trim();
}

/** Whitespace stays as written; a gap that held a comment becomes a line break if it spanned lines, else a space. */
const separator = (gap: string) => (/^\s+$/.test(gap) ? gap : /\n/.test(gap) ? '\n' : ' ');

function printed(text: string, symbol: string): string {
  if (symbol === 'IDENTIFIER') return text.toLowerCase();
  if (symbol === 'QUOTED_IDENTIFIER') return `"${text.slice(1, -1).replace(/""/g, '"').toLowerCase().replace(/"/g, '""')}"`;
  return text;
}

const isWord = (t: { symbol: string }) => NAME.has(t.symbol) || t.symbol.startsWith('KW_');

function glued(left: { text: string; symbol: string }, right: { text: string; symbol: string }): boolean {
  if (right.text === ',' || right.text === ')' || right.text === ']' || right.text === ';') return true;
  if (left.text === '(' || left.text === '[') return true;
  if (isWord(left) && (right.text === '.' || right.text === '(' || right.text === '[')) return true;
  return left.text === '.' && (isWord(right) || right.text === '*');
}
