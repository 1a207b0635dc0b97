import {
  type ASTVisitor,
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  Lexer,
  Source,
  type SelectionSetNode,
  TokenKind,
  type ValidationContext,
} from 'graphql';

// What a query may cost, checked before anything runs: the text before it is parsed (graphql-js's parser recurses,
// so brackets nested a few thousand deep would overflow the stack), then the shape of the parsed document, counted
// as the fields would run, fragment spreads included, without ever expanding a spread: each fragment is measured
// once and its measure reused wherever it is spread, so 32 fragments that each spread the next twice cost 32
// measures, not 2^32 fields. The work is linear in the document's size.

/** MLflow's limits (mlflow/server/graphql/graphql_no_batching.py), in its words. */
export const MAX_DEPTH = 10;
export const MAX_SELECTIONS = 1000;
export const MAX_ROOT_FIELDS = 10;
export const MAX_ALIASES = 10;
/** svc's: MLflow's UI sends queries of about 2 KB; these bound the parser's work and its recursion. */
export const MAX_QUERY_CHARS = 64 * 1024;
export const MAX_TOKENS = 10_000;
export const MAX_NESTING = 64;
/**
 * graphql-js's standard rules compare fragments pairwise (OverlappingFieldsCanBeMerged) and follow chains of them
 * recursively: 300 one-field fragments spread side by side cost them 0.26 s, a chain of 1 400 0.3 s.
 */
export const MAX_FRAGMENTS = 50;

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/**
 * The text's size, token count and bracket nesting, read with graphql-js's own lexer (strings and comments as the
 * parser reads them); a syntax error the lexer meets is thrown as the parser would throw it.
 */
export function checkQueryText(query: string): void {
  if (query.length > MAX_QUERY_CHARS) throw new GraphQLError(`Query exceeds maximum length of ${MAX_QUERY_CHARS} characters`);
  const lexer = new Lexer(new Source(query));
  let tokens = 0;
  let nesting = 0;
  for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
    if (++tokens > MAX_TOKENS) throw new GraphQLError(`Query exceeds maximum of ${MAX_TOKENS} tokens`);
    if (OPENING.has(token.kind) && ++nesting > MAX_NESTING) {
      throw new GraphQLError(`Query exceeds maximum nesting of ${MAX_NESTING} brackets`);
    }
    if (CLOSING.has(token.kind)) nesting--;
  }
}

/** A selection set as it would run, its fragments spread in. */
type Measure = {
  /** every field it reaches, at any level, as often as it is reached */
  fields: number;
  /** levels of fields below it */
  depth: number;
  /** fields at its own level */
  top: number;
  /** aliased fields at its own level */
  topAliases: number;
  /** the most aliased fields at any one level */
  aliases: number;
};
const NOTHING: Measure = { fields: 0, depth: 0, top: 0, topAliases: 0, aliases: 0 };

// Recursion here follows one definition's selection sets, which checkQueryText bounds to MAX_NESTING levels; a
// spread reads its fragment's measure, taken before, and never recurses into another definition.
function measure(set: SelectionSetNode, fragments: ReadonlyMap<string, Measure>): Measure {
  const m = { ...NOTHING };
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      const below = selection.selectionSet ? measure(selection.selectionSet, fragments) : NOTHING;
      m.fields += 1 + below.fields;
      m.depth = Math.max(m.depth, 1 + below.depth);
      m.top += 1;
      if (selection.alias) m.topAliases += 1;
      m.aliases = Math.max(m.aliases, below.aliases);
    } else {
      // an unknown or cyclic spread counts nothing here: the standard rules refuse it afterwards
      const inner =
        selection.kind === Kind.FRAGMENT_SPREAD
          ? (fragments.get(selection.name.value) ?? NOTHING)
          : measure(selection.selectionSet, fragments);
      m.fields += inner.fields;
      m.depth = Math.max(m.depth, inner.depth);
      m.top += inner.top;
      m.topAliases += inner.topAliases;
      m.aliases = Math.max(m.aliases, inner.aliases);
    }
  }
  m.aliases = Math.max(m.aliases, m.topAliases);
  return m;
}

/** The fragments spread anywhere in a selection set, by name. */
function spreadsIn(set: SelectionSetNode, out: string[] = []): string[] {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FRAGMENT_SPREAD) out.push(selection.name.value);
    else if (selection.selectionSet) spreadsIn(selection.selectionSet, out);
  }
  return out;
}

/**
 * Each fragment's measure, taken after those it spreads: a depth-first walk with its own stack (a long chain of
 * fragments must not recurse), where a fragment still open when it is reached again is a cycle and counts nothing.
 */
function measureFragments(document: DocumentNode): Map<string, Measure> {
  const byName = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION && !byName.has(d.name.value)) byName.set(d.name.value, d);
  const measures = new Map<string, Measure>();
  const opened = new Set<string>();
  for (const start of byName.keys()) {
    if (opened.has(start)) continue;
    opened.add(start);
    const stack = [{ name: start, next: spreadsIn(byName.get(start)!.selectionSet) }];
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const name = top.next.pop();
      if (name === undefined) {
        stack.pop();
        measures.set(top.name, measure(byName.get(top.name)!.selectionSet, measures));
      } else if (byName.has(name) && !opened.has(name)) {
        opened.add(name);
        stack.push({ name, next: spreadsIn(byName.get(name)!.selectionSet) });
      }
    }
  }
  return measures;
}

/**
 * MLflow's limits on a query's shape (depth, total selections, root fields, aliases at one level), counted through
 * every fragment spread, and svc's on the number of fragments. Every definition is held to them, fragments too, so
 * that the standard rules that run after this one only ever see a bounded document.
 */
export function QueryShapeRule(context: ValidationContext): ASTVisitor {
  return {
    Document(document) {
      const fragments = measureFragments(document);
      let selections = 0;
      let roots = 0;
      let fragmentCount = 0;
      const worst = { ...NOTHING };
      for (const definition of document.definitions) {
        if (definition.kind !== Kind.OPERATION_DEFINITION && definition.kind !== Kind.FRAGMENT_DEFINITION) continue;
        const m = measure(definition.selectionSet, fragments);
        if (definition.kind === Kind.OPERATION_DEFINITION) {
          selections += m.fields;
          roots += m.top;
        } else fragmentCount++;
        worst.fields = Math.max(worst.fields, m.fields);
        worst.depth = Math.max(worst.depth, m.depth);
        worst.aliases = Math.max(worst.aliases, m.aliases);
      }
      const refuse = (message: string) => context.reportError(new GraphQLError(message));
      if (worst.depth > MAX_DEPTH) refuse(`Query exceeds maximum depth of ${MAX_DEPTH}`);
      if (Math.max(selections, worst.fields) > MAX_SELECTIONS) refuse(`Query exceeds maximum total selections of ${MAX_SELECTIONS}`);
      if (roots > MAX_ROOT_FIELDS) {
        refuse(`GraphQL queries should have at most ${MAX_ROOT_FIELDS} root fields, got ${roots} root fields.`);
      }
      if (worst.aliases > MAX_ALIASES) {
        refuse(`GraphQL queries should have at most ${MAX_ALIASES} aliases, got ${worst.aliases} aliases.`);
      }
      if (fragmentCount > MAX_FRAGMENTS) refuse(`Query exceeds maximum of ${MAX_FRAGMENTS} fragments, got ${fragmentCount}`);
      return false;
    },
  };
}
