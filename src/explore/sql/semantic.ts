import type * as T from 'dt-sql-parser/dist/lib/trino/TrinoSqlParser';
import { applyEdits, type Edit } from './edits.ts';
import { SEMANTIC_DISTANCE } from './functions.ts';
import { stringIndex } from './parse.ts';
import type { ParsedStatement } from './statement.ts';
import { relationReferences, type Defaults } from './tables.ts';
import { is, kindOf, nameOf, namesOf, primaryOf, walk, type Node } from './tree.ts';

/** The columns of a lake table the rewrite reads, for lineage when the catalog has not listed the table yet. */
export const LAKE_COLUMNS = ['import_key', 'document_id', 'embedding'];

// semantic_distance(<column>, '<phrase>') in the tree (docs/explore.md, "Hybrid SQL"): where each call is, which
// table of its own FROM clause the column belongs to, and the text with every call rewritten into a join with the
// lake table that holds the column's embeddings. Pure: the registry, the policy and the embedder are the caller's
// (src/explore/semantic.ts).

/** One call, resolved: the base table in the call's own FROM clause that holds the column. */
export type SemanticCall = {
  call: T.FunctionCallContext;
  /** `catalog.schema.table` and the column, lower case. */
  table: string;
  column: string;
  phrase: string;
  /** The relation in the FROM clause (`orders o`), and the name the statement reads it by (`o`, or `orders`). */
  relation: T.AliasedRelationContext;
  qualifier: string;
  scope: T.QuerySpecificationContext;
};

/** What joins a relation to the embeddings of one of its columns. */
export type SemanticJoin = { lakeTable: string; documentId: string; keyColumn: string };

export type Refused = { refusal: string };

// Where the calls are depends on the statement alone (a statement is never changed once parsed): found once per
// statement, as most statements have none and the walk is most of step 5's time on a statement seen before.
const callNodes = new WeakMap<ParsedStatement, readonly T.FunctionCallContext[]>();
function callsIn(statement: ParsedStatement): readonly T.FunctionCallContext[] {
  let calls = callNodes.get(statement);
  if (calls) return calls;
  const found: T.FunctionCallContext[] = [];
  walk(statement.query, (n) => {
    if (is(n, 'FunctionCall') && namesOf(n.functionName().qualifiedName()).join('.') === SEMANTIC_DISTANCE) found.push(n);
  });
  callNodes.set(statement, (calls = found));
  return calls;
}

/** Every call of semantic_distance, resolved; the first one that cannot be is the refusal. */
export function semanticCalls(
  statement: ParsedStatement,
  defaults: Defaults,
  columnsOf: (table: string) => readonly string[] | undefined,
): SemanticCall[] | Refused {
  const calls = callsIn(statement);
  if (calls.length === 0) return [];
  const tables = tablesByReference(statement, defaults);
  const out: SemanticCall[] = [];
  for (const call of calls) {
    const resolved = resolveCall(call, tables, columnsOf);
    if ('refusal' in resolved) return resolved;
    out.push(resolved);
  }
  return out;
}

function resolveCall(
  call: T.FunctionCallContext,
  tables: ReadonlyMap<unknown, string>,
  columnsOf: (table: string) => readonly string[] | undefined,
): SemanticCall | Refused {
  const args = call.expression();
  const written = call.getText();
  const shape = `${SEMANTIC_DISTANCE}(<column>, '<phrase>')`;
  if (args.length !== 2 || call.ASTERISK() || call.over() || call.filter() || call.setQuantifier() || call.KW_ORDER())
    return { refusal: `${SEMANTIC_DISTANCE} takes a column and a phrase, ${shape}; got ${written}.` };
  const column = primaryOf(args[0]);
  const phrase = primaryOf(args[1]);
  if (!is(column, 'ColumnReference'))
    return { refusal: `The first argument of ${SEMANTIC_DISTANCE} must be a column of a table: ${shape}.` };
  if (!is(phrase, 'StringLiteral') || kindOf(phrase.string()) !== 'BasicStringLiteral')
    return { refusal: `The second argument of ${SEMANTIC_DISTANCE} must be a quoted phrase: ${shape}.` };
  const text = phrase.getText().slice(1, -1).replaceAll("''", "'");
  if (!text.trim()) return { refusal: `The phrase of ${SEMANTIC_DISTANCE} is empty: say what the rows should be close to.` };
  const scope = scopeOf(call);
  if (!scope)
    return {
      refusal: `${SEMANTIC_DISTANCE} ranks the rows of one SELECT; in the ORDER BY of a UNION, EXCEPT or INTERSECT, rank inside one of its queries.`,
    };
  const parts = namesOf(column.columnName().qualifiedName());
  const name = parts.at(-1)!;
  const candidates = baseRelations(scope, tables).filter((r) =>
    parts.length === 1 ? (columnsOf(r.table) ?? []).includes(name) : parts.length === 2 && r.qualifier === parts[0],
  );
  const label = parts.join('.');
  if (parts.length > 2)
    return { refusal: `Name the column of ${SEMANTIC_DISTANCE} as <column> or <table or alias>.<column>, not ${label}.` };
  if (candidates.length > 1) return { refusal: `${label} in ${SEMANTIC_DISTANCE} is ambiguous: qualify it with its table's alias.` };
  const found = candidates[0];
  if (!found || !(columnsOf(found.table) ?? []).includes(name))
    return {
      refusal: `${SEMANTIC_DISTANCE}(${label}, …) needs a column of a table read in the same FROM clause; ${label} is not one (a column of a subquery or an outer query is not).`,
    };
  return { call, table: found.table, column: name, phrase: text, relation: found.relation, qualifier: found.qualifier, scope };
}

/** The query whose FROM clause the call reads: its own SELECT, or for the ORDER BY of a plain query, that query's. */
function scopeOf(call: T.FunctionCallContext): T.QuerySpecificationContext | undefined {
  for (let n = (call as unknown as Node).parent; n; n = n.parent) {
    if (is(n, 'QuerySpecification')) return n;
    if (is(n, 'QueryNoWith')) {
      const term = n.queryTerm();
      const primary = is(term, 'QueryTermDefault') ? term.queryPrimary() : undefined;
      return is(primary, 'QueryPrimaryDefault') ? primary.querySpecification() : undefined;
    }
  }
  return undefined;
}

type Relation = { relation: T.AliasedRelationContext; qualifier: string | undefined; table: string };
type BaseRelation = Relation & { qualifier: string };

/** The relations of a FROM clause in order (not those inside its subqueries), and whether a join merges columns. */
function relationsOf(scope: T.QuerySpecificationContext, tables: ReadonlyMap<unknown, string>) {
  const out: Relation[] = [];
  let merged = false;
  const visit = (r: unknown): void => {
    if (is(r, 'JoinRelation')) {
      if (r.KW_NATURAL() || r.joinCriteria()?.KW_USING()) merged = true;
      visit(r.relation(0));
      visit(r.sampledRelation() ?? r.relation(1));
      return;
    }
    if (is(r, 'RelationDefault')) visit(r.sampledRelation());
    else if (is(r, 'SampledRelation')) visit(r.patternRecognition().aliasedRelation());
    else if (is(r, 'AliasedRelation')) aliased(r);
  };
  const aliased = (r: T.AliasedRelationContext): void => {
    const primary = r.relationPrimary();
    if (is(primary, 'ParenthesizedRelation')) {
      visit(primary.relation());
      return;
    }
    const ref = is(primary, 'TableName') ? (primary.tableOrViewName().tableRef() ?? primary.tableOrViewName().viewRef()) : undefined;
    const alias = r.identifier() ? nameOf(r.identifier()) : ref ? namesOf(ref).at(-1) : undefined;
    out.push({ relation: r, qualifier: alias, table: (ref && tables.get(ref)) ?? '' });
  };
  for (const r of scope.relation()) visit(r);
  return { relations: out, merged };
}

const baseRelations = (scope: T.QuerySpecificationContext, tables: ReadonlyMap<unknown, string>): BaseRelation[] =>
  relationsOf(scope, tables).relations.filter((r): r is BaseRelation => !!r.table && !!r.qualifier);

/** Names of the columns the join adds: chosen so no table's own column is shadowed or ambiguous. */
export const JOINED = { key: 'svc_semantic_key', embedding: 'svc_semantic_embedding' };

/**
 * The statement with each call replaced by `cosine_distance(<join>.embedding, <phrase vector>)` and each relation
 * that has calls joined (LEFT: a row without an embedding stays, its distance null) to its embeddings: the import's
 * rows of the collection's table, on `import_key = CAST(<key column> AS varchar)`. A `*` in a SELECT that gains a
 * join becomes the relations' own stars, so the join's columns never show; where a relation has no name to star
 * (a subquery without an alias) or a join merges columns (USING, NATURAL), that is the refusal.
 */
export function rewriteSemantic(
  statement: ParsedStatement,
  calls: readonly SemanticCall[],
  joinOf: (call: SemanticCall) => SemanticJoin,
  vectorOf: (phrase: string) => string,
  tables: ReadonlyMap<unknown, string>,
): string | Refused {
  const at = stringIndex(statement.sql);
  const span = (n: { start: { start: number } | null; stop: { stop: number } | null }) => ({
    from: at(n.start!.start),
    to: at(n.stop!.stop + 1),
  });
  const edits: Edit[] = [];
  const joins = new Map<T.AliasedRelationContext, Map<string, { alias: string; join: SemanticJoin; qualifier: string }>>();
  let count = 0;
  for (const call of calls) {
    const join = joinOf(call);
    const perRelation = joins.get(call.relation) ?? new Map();
    joins.set(call.relation, perRelation);
    const id = `${join.lakeTable}\u0000${join.documentId}\u0000${join.keyColumn}`;
    if (!perRelation.has(id)) perRelation.set(id, { alias: `svc_semantic_${++count}`, join, qualifier: call.qualifier });
    const alias = perRelation.get(id)!.alias;
    edits.push({
      ...span(call.call),
      text: `cosine_distance(${quoted(alias)}.${quoted(JOINED.embedding)}, ${vectorOf(call.phrase)})`,
    });
  }
  for (const [relation, joined] of joins) {
    const own = statement.sql.slice(span(relation).from, span(relation).to);
    const rest = [...joined.values()].map(({ alias, join, qualifier }) => {
      const lake = join.lakeTable.split('.').map(quoted).join('.');
      const rows = `SELECT import_key AS ${quoted(JOINED.key)}, embedding AS ${quoted(JOINED.embedding)} FROM ${lake} WHERE document_id = '${join.documentId.replaceAll("'", "''")}'`;
      return ` LEFT JOIN (${rows}) AS ${quoted(alias)} ON ${quoted(alias)}.${quoted(JOINED.key)} = CAST(${quoted(qualifier)}.${quoted(join.keyColumn)} AS varchar)`;
    });
    edits.push({ ...span(relation), text: `(${own}${rest.join('')})` });
  }
  for (const scope of new Set(calls.filter((c) => joins.has(c.relation)).map((c) => c.scope))) {
    const stars = scope
      .selectList()
      .selectItem()
      .map((item) => item.selectAllWithoutTable())
      .filter((star): star is T.SelectAllWithoutTableContext => !!star);
    if (stars.length === 0) continue;
    const { relations, merged } = relationsOf(scope, tables);
    const unnamed = relations.find((r) => !r.qualifier);
    if (merged || unnamed)
      return {
        refusal: `SELECT * beside ${SEMANTIC_DISTANCE} needs every relation of its FROM clause named, and no USING or NATURAL join: name the columns instead.`,
      };
    for (const star of stars) edits.push({ ...span(star), text: relations.map((r) => `${quoted(r.qualifier!)}.*`).join(', ') });
  }
  return applyEdits(statement.sql, edits);
}

/** The base tables of a statement by the node that names them, for `rewriteSemantic`. */
export function tablesByReference(statement: ParsedStatement, defaults: Defaults): Map<unknown, string> {
  const tables = new Map<unknown, string>();
  for (const r of relationReferences(statement, defaults)) if ('table' in r) tables.set(r.ref, r.table);
  return tables;
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
