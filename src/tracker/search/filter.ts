import { invalidParameter } from '../errors.ts';
import { tokenize, tokens as lex, type Keyword, type Token } from './lexer.ts';

// A recursive-descent parser for MLflow's filter grammar, shared by every search:
//   filter     := comparison (AND comparison)* END
//   comparison := identifier operator value | identifier [NOT] IN list | identifier [I]LIKE value
//   value      := number | 'string' | "string"        list := '(' string (',' string)* ')'
// It knows nothing of entities: each search resolves the identifier (`metrics.acc`) and checks the comparator and
// value types with its own rules, so the messages can name the entity.

/** The identifier split at its first dot: `metrics.a.b` is entity `metrics`, key `a.b`; `status` has no entity. */
export type Identifier = { entity: string | undefined; key: string; text: string };

export type Value =
  | { kind: 'number'; value: number; text: string }
  | { kind: 'string'; value: string; text: string }
  /** An unquoted word where a value belongs: refused by every entity, with its own message. */
  | { kind: 'bare'; text: string }
  | { kind: 'list'; values: string[]; text: string };

export type Comparison = { identifier: Identifier; op: string; value: Value };

export type OrderClause = { identifier: Identifier; ascending: boolean };

/**
 * The most conditions a filter may join with AND. MLflow's grammar sets no bound, but its clients and tests send a
 * few dozen at most; a bound keeps the statement a filter becomes small (each condition is work for the database,
 * which in svc dev shares the thread that answers HTTP).
 */
export const MAX_FILTER_CLAUSES = 100;

export function parseFilter(filter: string | undefined): Comparison[] {
  if (!filter || filter.trim() === '') return [];
  const tokens = lazyTokens(filter);
  let i = 0;
  const peek = (): Token => tokens.at(i);
  const next = (): Token => tokens.at(i++);
  const rest = (from: Token): string => filter.slice(from.at).trim();
  const invalidClause = (token: Token, hint = ''): never => {
    throw invalidParameter(`Invalid clause(s) in filter string: '${rest(token)}'${hint}`);
  };

  const comparison = (): Comparison => {
    const start = peek();
    if (start.kind === 'end')
      throw invalidParameter(`Invalid clause(s) in filter string: '${filter.trim()}'. A condition must follow AND.`);
    if (start.kind !== 'identifier') return invalidClause(start, '. Expected an identifier such as metrics.<key>.');
    next();
    const identifier = toIdentifier(start);
    // The clause as far as it was read, for messages.
    const clause = () => {
      const last = tokens.at(i - 1);
      return filter.slice(start.at, last.at + last.text.length).trim();
    };
    const incomplete = (what: string): never => {
      throw invalidParameter(`Invalid comparison clause '${clause()}': expected ${what}.`);
    };
    const opToken = next();
    let op: string;
    if (opToken.kind === 'operator') op = opToken.text;
    else if (isKeyword(opToken, 'LIKE', 'ILIKE', 'IN')) op = opToken.word;
    else if (isKeyword(opToken, 'NOT') && isKeyword(peek(), 'IN')) {
      next();
      op = 'NOT IN';
    } else if (isKeyword(opToken, 'IS')) {
      throw invalidParameter(`Invalid comparison clause '${rest(start)}': IS NULL and IS NOT NULL are not supported.`);
    } else return incomplete(`a comparator (=, !=, >, >=, <, <=, LIKE, ILIKE, IN) after '${start.text}'`);

    if (op === 'IN' || op === 'NOT IN') return { identifier, op, value: list(start) };
    const valueToken = next();
    switch (valueToken.kind) {
      case 'number':
        return { identifier, op, value: { kind: 'number', value: valueToken.value, text: valueToken.text } };
      case 'string':
        return { identifier, op, value: { kind: 'string', value: valueToken.value, text: valueToken.text } };
      case 'identifier':
        return { identifier, op, value: { kind: 'bare', text: valueToken.text } };
      case 'punctuation':
        if (valueToken.text === '(') {
          i -= 1;
          return { identifier, op, value: list(start) };
        }
        return incomplete(`a value after '${op}'`);
      default:
        return incomplete(`a value after '${op}'`);
    }
  };

  const list = (start: Token): Value => {
    const open = next();
    if (open.kind !== 'punctuation' || open.text !== '(') {
      throw invalidParameter(`Invalid comparison clause '${rest(start)}': expected a list of quoted strings such as ('a', 'b').`);
    }
    const values: string[] = [];
    for (;;) {
      const token = next();
      if (token.kind === 'punctuation' && token.text === ')' && values.length === 0) {
        throw invalidParameter('While parsing a list in the query, expected a non-empty list of string values, but got empty list');
      }
      if (token.kind !== 'string') {
        throw invalidParameter(
          `While parsing a list in the query, expected string value, punctuation, or whitespace, but got different type in list: ${rest(open)}`,
        );
      }
      values.push(token.value);
      const sep = next();
      if (sep.kind === 'punctuation' && sep.text === ')') break;
      if (sep.kind !== 'punctuation' || sep.text !== ',') {
        throw invalidParameter(
          `While parsing a list in the query, expected ',' or ')' but got '${sep.text || 'the end'}' in: ${rest(open)}`,
        );
      }
    }
    return { kind: 'list', values, text: filter.slice(open.at, tokens.at(i - 1).at + 1) };
  };

  const comparisons = [comparison()];
  for (;;) {
    const token = peek();
    if (token.kind === 'end') break;
    if (isKeyword(token, 'AND')) {
      next();
      if (comparisons.length === MAX_FILTER_CLAUSES) {
        throw invalidParameter(
          `Invalid filter: more than ${MAX_FILTER_CLAUSES} conditions joined with AND (at most ${MAX_FILTER_CLAUSES} are allowed). Search with fewer conditions.`,
        );
      }
      comparisons.push(comparison());
      continue;
    }
    if (isKeyword(token, 'OR')) invalidClause(token, '. Only AND is supported between conditions (OR is not).');
    invalidClause(token, '. Conditions are joined with AND.');
  }
  return comparisons;
}

/** The filter's tokens read as far as the parser has asked; past the end, the `end` token again. */
function lazyTokens(filter: string): { at(k: number): Token } {
  const lexer = lex(filter);
  const read: Token[] = [];
  return {
    at(k) {
      while (read.length <= k) {
        const next = lexer.next();
        if (next.done) return read[read.length - 1]!;
        read.push(next.value);
      }
      return read[k]!;
    },
  };
}

/** One order_by entry: `<identifier> [ASC|DESC]`, as the runs, experiments and registry searches take it. */
export function parseOrderBy(clause: string): OrderClause {
  const tokens = tokenize(clause, 'order_by clause');
  const unparsable = (): never => {
    throw invalidParameter(`Invalid order_by clause '${clause}'. Could not be parsed.`);
  };
  const [first, second, third] = tokens;
  if (first?.kind !== 'identifier') return unparsable();
  if (second?.kind === 'end') return { identifier: toIdentifier(first, true), ascending: true };
  if (third?.kind !== 'end') return unparsable();
  if (second?.kind !== 'keyword' || (second.word !== 'ASC' && second.word !== 'DESC')) {
    throw invalidParameter(`Invalid ordering key in order_by clause '${clause}'.`);
  }
  return { identifier: toIdentifier(first, true), ascending: second.word === 'ASC' };
}

function isKeyword(token: Token, ...words: Keyword[]): token is Extract<Token, { kind: 'keyword' }> {
  return token.kind === 'keyword' && words.includes(token.word);
}

function toIdentifier(token: Extract<Token, { kind: 'identifier' }>, splitQuoted = false): Identifier {
  const [head, ...tail] = token.parts;
  // An order_by entry may quote the whole name (`metrics.acc`); MLflow reads it as if unquoted.
  if (splitQuoted && tail.length === 0 && head!.quoted && head!.text.includes('.')) {
    const dot = head!.text.indexOf('.');
    return { entity: head!.text.slice(0, dot), key: head!.text.slice(dot + 1), text: token.text };
  }
  if (tail.length === 0) return { entity: undefined, key: head!.text, text: token.text };
  return { entity: head!.text, key: tail.map((p) => p.text).join('.'), text: token.text };
}
