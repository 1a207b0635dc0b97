import type * as T from 'dt-sql-parser/dist/lib/trino/TrinoSqlParser';

// Reading dt-sql-parser's Trino parse tree. Labelled grammar alternatives (`# setOperation`, `# tableName`, ...)
// are told apart by their context class, the only thing that distinguishes them; the typed accessors of each
// context do the rest. The types are imported as types only, so no second copy of the parser module is loaded.

export type Node = {
  constructor: { name: string };
  children?: Node[] | null;
  parent?: Node | null;
  symbol?: { type: number; start: number; stop: number };
  getText(): string;
};

interface Kinds {
  StatementDefault: T.StatementDefaultContext;
  RootQuery: T.RootQueryContext;
  QueryStatement: T.QueryStatementContext;
  QueryTermDefault: T.QueryTermDefaultContext;
  SetOperation: T.SetOperationContext;
  QueryPrimaryDefault: T.QueryPrimaryDefaultContext;
  Table: T.TableContext;
  InlineTable: T.InlineTableContext;
  Subquery: T.SubqueryContext;
  JoinRelation: T.JoinRelationContext;
  RelationDefault: T.RelationDefaultContext;
  AliasedRelation: T.AliasedRelationContext;
  NamedQuery: T.NamedQueryContext;
  TableName: T.TableNameContext;
  ParenthesizedRelation: T.ParenthesizedRelationContext;
  ExpressionSourceTable: T.ExpressionSourceTableContext;
  SubqueryRelation: T.SubqueryRelationContext;
  Unnest: T.UnnestContext;
  Lateral: T.LateralContext;
  JsonTable: T.JsonTableContext;
  TableFunctionInvocation: T.TableFunctionInvocationContext;
  ColumnReference: T.ColumnReferenceContext;
  ColumnRef: T.ColumnRefContext;
  Dereference: T.DereferenceContext;
  Lambda: T.LambdaContext;
  Measure: T.MeasureContext;
  RowConstructor: T.RowConstructorContext;
  FunctionCall: T.FunctionCallContext;
  GenericType: T.GenericTypeContext;
  TypeConstructor: T.TypeConstructorContext;
  ParenthesizedExpression: T.ParenthesizedExpressionContext;
  Predicated: T.PredicatedContext;
  ValueExpressionDefault: T.ValueExpressionDefaultContext;
  NonReserved: T.NonReservedContext;
  UnquotedIdentifier: T.UnquotedIdentifierContext;
  QuotedIdentifier: T.QuotedIdentifierContext;
  BackQuotedIdentifier: T.BackQuotedIdentifierContext;
  DigitIdentifier: T.DigitIdentifierContext;
  ListAggOverflowBehavior: T.ListAggOverflowBehaviorContext;
  OrdinalityColumn: T.OrdinalityColumnContext;
  ValueColumn: T.ValueColumnContext;
  QueryColumn: T.QueryColumnContext;
  NestedColumns: T.NestedColumnsContext;
  QueryNoWith: T.QueryNoWithContext;
  QuerySpecification: T.QuerySpecificationContext;
  SampledRelation: T.SampledRelationContext;
  StringLiteral: T.StringLiteralContext;
}

export type Kind = keyof Kinds;

export function is<K extends Kind>(node: unknown, kind: K): node is Kinds[K] {
  return !!node && (node as Node).constructor.name === `${kind}Context`;
}

export const kindOf = (node: unknown): string => (node as Node).constructor.name.replace(/Context$/, '');

export const childrenOf = (node: unknown): Node[] => (node as Node).children ?? [];

export const isTerminal = (node: unknown): boolean => !!(node as Node).symbol;

/** Depth-first, parents before children; `visit` returning false skips a node's subtree. */
export function walk(node: unknown, visit: (n: Node) => boolean | void): void {
  if (visit(node as Node) === false) return;
  for (const child of childrenOf(node)) walk(child, visit);
}

/**
 * An identifier's name as Trino compares it: quotes removed, doubled quotes undone, lower case. Trino matches
 * catalog, schema, table and column names case-insensitively, quoted or not.
 */
export function nameOf(identifier: T.IdentifierContext | null | undefined): string {
  if (!identifier) return '';
  const text = identifier.getText();
  if (is(identifier, 'QuotedIdentifier')) return text.slice(1, -1).replace(/""/g, '"').toLowerCase();
  if (is(identifier, 'BackQuotedIdentifier')) return text.slice(1, -1).replace(/``/g, '`').toLowerCase();
  return text.toLowerCase();
}

export const namesOf = (q: { identifier(): T.IdentifierContext[] } | null | undefined): string[] => (q ? q.identifier().map(nameOf) : []);

/** `expression` unwrapped down to its primary expression when it is nothing more (no operator, no predicate). */
export function primaryOf(expression: unknown): Node | undefined {
  let n = expression as Node | undefined;
  for (;;) {
    if (!n) return undefined;
    const kids = childrenOf(n);
    if (is(n, 'ParenthesizedExpression')) n = n.expression() as unknown as Node;
    else if (kindOf(n) === 'Expression' || is(n, 'ValueExpressionDefault')) n = kids[0];
    else if (is(n, 'Predicated')) {
      if (kids.length !== 1) return n;
      n = kids[0];
    } else return n;
  }
}

/** The table or view a query reads by name: `FROM t` (a relation) or `TABLE t` (a query); undefined for other nodes. */
export function tableRefOf(n: Node): T.TableRefContext | T.ViewRefContext | undefined {
  if (is(n, 'TableName')) return n.tableOrViewName().tableRef() ?? n.tableOrViewName().viewRef() ?? undefined;
  if (is(n, 'Table')) return n.tableRef() ?? undefined;
  return undefined;
}
