import { ALLOWED_FUNCTIONS, ALLOWED_TYPES } from './functions.ts';
import { is, isTerminal, nameOf, namesOf, walk, type Node } from './tree.ts';

// The second wall behind the grammar's verdict that the statement is a query: keywords that write, change
// settings or control transactions, found among the parse tree's keyword tokens (a string literal is a STRING
// token, a quoted identifier a QUOTED_IDENTIFIER token, and a keyword used as a name sits under `nonReserved`, so
// `updated_at`, `"delete"`, `comment` or `'drop table'` never match); functions and types outside the allow-lists
// (functions.ts); table functions; identifier styles that Trino's own parser rejects.

const DENIED = new Set([
  'INSERT',
  'UPDATE',
  'DELETE',
  'MERGE',
  'CREATE',
  'DROP',
  'ALTER',
  'TRUNCATE',
  'RENAME',
  'GRANT',
  'REVOKE',
  'DENY',
  'CALL',
  'EXECUTE',
  'IMMEDIATE',
  'PREPARE',
  'DEALLOCATE',
  'SET',
  'RESET',
  'USE',
  'COMMENT',
  'ANALYZE',
  'REFRESH',
  'EXPLAIN',
  'START',
  'TRANSACTION',
  'COMMIT',
  'ROLLBACK',
]);

/** The first reason found anywhere under `node` to refuse the statement, if any. */
export function refusalOf(node: unknown, symbolOf: (type: number) => string): string | undefined {
  if (is(node, 'RootQuery') && node.withFunction()) {
    return 'Inline functions (WITH FUNCTION) are not allowed: redaction cannot trace values through them; use built-in functions.';
  }
  let reason: string | undefined;
  walk(node, (n) => {
    if (reason) return false;
    if (is(n, 'TableFunctionInvocation')) {
      const name = n.tableFunctionCall().functionName().getText();
      reason =
        `Table functions are not allowed (this one is ${name}): a table function such as system.query can send its own ` +
        "SQL to a connector's database without Trino checking it; read ordinary tables (UNNEST and JSON_TABLE are fine).";
      return false;
    }
    if (is(n, 'FunctionCall')) reason = functionRefusal(namesOf(n.functionName().qualifiedName()));
    else if (is(n, 'GenericType')) reason = typeRefusal(nameOf(n.identifier()));
    else if (is(n, 'TypeConstructor') && n.identifier()) reason = typeRefusal(nameOf(n.identifier()));
    else if (is(n, 'BackQuotedIdentifier')) reason = `The identifier ${n.getText()} is not valid in Trino: quote names with double quotes.`;
    else if (is(n, 'DigitIdentifier'))
      reason = `The identifier ${n.getText()} is not valid in Trino: a name starting with a digit needs double quotes.`;
    else if (isTerminal(n)) reason = deniedKeyword(n, symbolOf);
    return undefined;
  });
  return reason;
}

function deniedKeyword(terminal: Node, symbolOf: (type: number) => string): string | undefined {
  const keyword = symbolOf(terminal.symbol!.type).replace(/^KW_/, '');
  if (!DENIED.has(keyword)) return undefined;
  if (is(terminal.parent, 'NonReserved')) return undefined; // the keyword is a name here: a column, alias or function
  if (keyword === 'TRUNCATE' && is(terminal.parent, 'ListAggOverflowBehavior')) return undefined; // listagg(...) ON OVERFLOW TRUNCATE
  return `The keyword ${keyword} is not allowed in a read-only query.`;
}

function functionRefusal(name: string[]): string | undefined {
  const written = name.join('.');
  if (name.length === 1 && ALLOWED_FUNCTIONS.has(name[0]!)) return undefined;
  return `The function ${written} is not allowed: generated SQL may call only Trino's built-in scalar, aggregate and window functions that compute on their arguments (docs/explore.md lists them).`;
}

function typeRefusal(name: string): string | undefined {
  if (ALLOWED_TYPES.has(name)) return undefined;
  return `The type ${name} is not allowed: use one of Trino's standard types (${[...ALLOWED_TYPES].join(', ')}).`;
}
