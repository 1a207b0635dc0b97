import type { QueryNoWithContext } from 'dt-sql-parser/dist/lib/trino/TrinoSqlParser';
import { applyEdits, type Edit } from './edits.ts';
import { stringIndex } from './parse.ts';
import type { ParsedStatement } from './statement.ts';
import { is } from './tree.ts';

// Step 5, second half: the outermost query gets `LIMIT n` unless it already has a LIMIT or FETCH FIRST. A LIMIT
// inside a subquery or a CTE does not bound the result, so it does not count. `LIMIT ALL` means "no limit": it is
// replaced by `LIMIT n`, so every result is bounded. An explicit limit larger than n is kept (the specification
// adds a LIMIT only where none exists). A query that is wholly one parenthesised query, `(SELECT ... LIMIT 5)`, is
// bounded by its inner LIMIT. The statement's terminating semicolon never appears in the result.

export function ensureLimit(sql: string, statement: ParsedStatement, limit: number): string {
  if (sql !== statement.sql) throw new Error('ensureLimit needs the very SQL text the statement was parsed from.');
  return withLimit(sql, limitEdits(statement, limit));
}

export type LimitEdits = { edits: Edit[]; suffix: string };

/** The edits that bound the statement's rows, for a text printed from the same tree (engine-statement.ts). */
export function limitEdits(statement: ParsedStatement, limit: number): LimitEdits {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`The automatic LIMIT must be a positive integer, not ${limit}.`);
  const at = stringIndex(statement.sql);
  const outer = outermost(statement.query.query());
  const edits: Edit[] = [];
  const all = outer.KW_LIMIT() ? outer.limitRowCount()?.KW_ALL() : null;
  if (all) edits.push({ from: at(all.symbol.start), to: at(all.symbol.stop + 1), text: String(limit) });
  const semicolon = statement.tokens.find((t) => t.channel === 0 && t.text === ';');
  if (semicolon) edits.push({ from: at(semicolon.start), to: at(semicolon.stop + 1), text: '' });
  return { edits, suffix: outer.KW_LIMIT() || outer.KW_FETCH() ? '' : `\nLIMIT ${limit}` };
}

/** `sql` with the limit's edits and any others applied, and the LIMIT appended where the query had none. */
export const withLimit = (sql: string, limit: LimitEdits, others: readonly Edit[] = []): string =>
  applyEdits(sql, [...limit.edits, ...others]).trim() + limit.suffix;

/** True when the outermost query already bounds its rows (LIMIT n or FETCH FIRST). */
export function hasOuterLimit(statement: ParsedStatement): boolean {
  const outer = outermost(statement.query.query());
  return !!outer.KW_FETCH() || (!!outer.KW_LIMIT() && !outer.limitRowCount()?.KW_ALL());
}

/** The queryNoWith whose ORDER BY / LIMIT apply to the result, looking through `( query )` wrappers. */
function outermost(query: unknown): QueryNoWithContext {
  let q = (is(query, 'QueryStatement') ? query.queryNoWith() : query) as QueryNoWithContext;
  for (;;) {
    const decorated = q.KW_ORDER() || q.KW_OFFSET() || q.KW_LIMIT() || q.KW_FETCH();
    const term = q.queryTerm();
    const primary = is(term, 'QueryTermDefault') ? term.queryPrimary() : undefined;
    if (decorated || !is(primary, 'Subquery')) return q;
    q = primary.queryNoWith();
  }
}
