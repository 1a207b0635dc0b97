import type { RootQueryContext, StatementContext } from 'dt-sql-parser/dist/lib/trino/TrinoSqlParser';
import { canonicalSql } from './canonical.ts';
import { lexTrino, nestingDepth, parseTrino, type Token } from './parse.ts';
import { refusalOf } from './refusals.ts';
import { is, kindOf } from './tree.ts';

// Step 5 of the pipeline, first half: the generated SQL must be exactly one read query in Trino's dialect. The
// model's text is printed back in its canonical form first (canonical.ts), and from here on that form is the
// statement: it is what is parsed, checked, limited, traced and executed. The grammar decides (one statement whose
// top level is a query: SELECT, WITH, VALUES, TABLE, UNION, EXCEPT, INTERSECT, parenthesised or not); then the
// keyword denylist, the function and type allow-lists, the table-function ban and the identifier checks.

export type ParsedStatement = {
  /** The canonical text, exactly as it was parsed; `ensureLimit` edits this text. */
  readonly sql: string;
  /** The statement's query (the only kind of statement that passes validation). */
  readonly query: RootQueryContext;
  /** Every token, comments and spaces included, with code-point offsets into `sql`. */
  readonly tokens: readonly Token[];
};

export type StatementValidation = { ok: true; statement: ParsedStatement } | { ok: false; reason: string };

const HIDDEN = 1;
// Parse time grows steeply with nesting (about 0.2 s at 100 levels of parentheses, 10 s at 1000); generated SQL
// needs a handful. These bounds keep a hostile statement from holding a core.
export const MAX_SQL_LENGTH = 100_000;
export const MAX_NESTING = 40;

// A statement seen again (the model's usual answers, a dashboard's SQL run once more, an edited statement rerun) is
// parsed once: validation depends on the text alone, and nothing changes a tree once it is built. The parse is most of
// step 5's time (about a millisecond for a short statement). A kept tree weighs about 250 bytes of heap a character
// of its text (51 KiB for a 200-character join), so the cache is bounded by its texts' length (8 MiB or so at most)
// as well as by count, least recently used first.
const KEPT_STATEMENTS = 128;
const KEPT_CHARACTERS = 32_000;
const validated = new Map<string, StatementValidation>();
let keptCharacters = 0;

export function validateStatement(sql: string): StatementValidation {
  const hit = validated.get(sql);
  if (hit) {
    validated.delete(sql); // most recently used goes last
    validated.set(sql, hit);
    return hit;
  }
  const validation = validateText(sql);
  if (sql.length <= KEPT_CHARACTERS / 8) {
    validated.set(sql, validation);
    keptCharacters += sql.length;
    while (validated.size > KEPT_STATEMENTS || keptCharacters > KEPT_CHARACTERS) {
      const oldest = validated.keys().next().value!;
      validated.delete(oldest);
      keptCharacters -= oldest.length;
    }
  }
  return validation;
}

function validateText(sql: string): StatementValidation {
  if (sql.length > MAX_SQL_LENGTH)
    return refuse(`The SQL is ${sql.length} characters long; the limit is ${MAX_SQL_LENGTH}: ask a narrower question.`);
  const lexed = lexTrino(sql);
  const depth = nestingDepth(lexed);
  if (depth > MAX_NESTING)
    return refuse(`The SQL nests parentheses or CASE ${depth} deep; the limit is ${MAX_NESTING}: simplify the query.`);
  const canonical = canonicalSql(lexed);
  const parsed = parseTrino(canonical);
  const meaningful = parsed.tokens.filter((t) => t.channel !== HIDDEN && parsed.symbolOf(t.type) !== 'EOF');
  if (meaningful.every((t) => parsed.symbolOf(t.type) === 'SEMICOLON')) {
    return refuse('The statement is empty: write one SELECT query.');
  }
  const error = parsed.errors[0];
  if (error) {
    const message = /failed predicate/.test(error.message) ? `unexpected ${near(canonical, error)}` : error.message;
    return refuse(`The SQL does not parse (line ${error.startLine}, column ${error.startColumn}): ${message}.`);
  }
  const statements = parsed.tree.statements().map((s) => s.singleStatement().statement());
  if (statements.length !== 1) {
    return refuse(`Exactly one statement is allowed, and this SQL holds ${statements.length}: ask one question per query.`);
  }
  const top = statements[0]!;
  if (!is(top, 'StatementDefault')) {
    return refuse(`Only read queries (SELECT, WITH, VALUES, UNION, EXCEPT, INTERSECT) are allowed; this is ${describe(top)}.`);
  }
  const query = top.rootQuery();
  const refusal = refusalOf(query, parsed.symbolOf);
  if (refusal) return refuse(refusal);
  return { ok: true, statement: { sql: canonical, query, tokens: parsed.tokens } };
}

const refuse = (reason: string): StatementValidation => ({ ok: false, reason });

/** `insertInto` -> "an INSERT INTO statement", `explainAnalyze` -> "an EXPLAIN ANALYZE statement". */
function describe(statement: StatementContext): string {
  const words = kindOf(statement)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toUpperCase();
  return `${/^[AEIOU]/.test(words) ? 'an' : 'a'} ${words} statement`;
}

function near(sql: string, error: { startLine: number; startColumn: number }): string {
  const line = sql.split(/\r?\n/)[error.startLine - 1] ?? '';
  const text = line.slice(error.startColumn - 1, error.startColumn + 11).trim();
  if (text.startsWith("'")) return 'input near an unterminated string literal';
  if (text.startsWith('"')) return 'input near an unterminated quoted identifier';
  return text ? `input near "${text}"` : 'end of input';
}
