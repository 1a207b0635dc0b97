import { TrinoSQL } from 'dt-sql-parser';

// Step 5 of the pipeline: the generated SQL must be exactly one read statement in Trino's dialect. The grammar
// decides (one statement whose top level is a query: SELECT, WITH, VALUES, UNION, EXCEPT, INTERSECT); a keyword
// denylist over the parse tree's keyword tokens is the second check, blind to string literals and to keywords
// used as identifiers; table functions, which can pass SQL through to a connector unchecked, are refused.

export type Validation = { ok: true; sql: string; hasLimit: boolean } | { ok: false; reason: string };

type Node = { constructor: { name: string }; children?: Node[] | null; parent?: Node | null; symbol?: { type: number }; getText(): string };

const parser = new TrinoSQL();
const vocabulary = parser.createLexer('').vocabulary;

const DENIED = new Set([
  'INSERT', 'UPDATE', 'DELETE', 'MERGE', 'CREATE', 'DROP', 'ALTER', 'TRUNCATE', 'GRANT', 'REVOKE', 'DENY', 'CALL',
  'EXECUTE', 'PREPARE', 'DEALLOCATE', 'SET', 'RESET', 'USE', 'COMMENT', 'ANALYZE', 'REFRESH', 'COMMIT', 'ROLLBACK',
  'START', 'TRANSACTION', 'RENAME', 'EXPLAIN', 'DESCRIBE', 'SHOW',
]);

const isIdentifierContext = (n: Node | null | undefined) => !!n && /Identifier|NonReserved/.test(n.constructor.name);

export function validateStatement(input: string): Validation {
  const sql = input.trim().replace(/;\s*$/, '');
  if (!sql) return { ok: false, reason: 'The statement is empty.' };
  const errors = parser.validate(sql);
  if (errors.length > 0) {
    const e = errors[0]!;
    return { ok: false, reason: `The SQL does not parse (line ${e.startLine}, column ${e.startColumn}): ${e.message}.` };
  }
  const tree = parser.parse(sql) as unknown as Node;
  const statements = (tree.children ?? []).flatMap((n) => n.children ?? []).filter((n) => n.constructor.name === 'SingleStatementContext');
  if (statements.length !== 1) return { ok: false, reason: `Exactly one statement is allowed; this SQL holds ${statements.length}.` };
  const top = statements[0]!.children?.[0];
  if (top?.constructor.name !== 'StatementDefaultContext') {
    return { ok: false, reason: `Only read queries (SELECT, WITH, UNION, EXCEPT, INTERSECT) are allowed; this is ${describe(top)}.` };
  }

  let refusal: string | undefined;
  walk(tree, (node) => {
    if (refusal) return;
    const name = node.constructor.name;
    if (name === 'TableFunctionInvocationContext' || name === 'TableFunctionCallContext') {
      refusal = 'Table functions are not allowed: they can pass SQL to a connector without Trino checking it.';
    } else if (node.symbol) {
      const keyword = (vocabulary.getSymbolicName(node.symbol.type) ?? '').replace(/^KW_/, '');
      if (DENIED.has(keyword) && !isIdentifierContext(node.parent) && !isIdentifierContext(node.parent?.parent)) {
        refusal = `The keyword ${keyword} is not allowed in a read-only query.`;
      }
    }
  });
  if (refusal) return { ok: false, reason: refusal };
  return { ok: true, sql, hasLimit: outerLimit(top) };
}

/** Appends `LIMIT n` unless the outermost query already has a LIMIT or FETCH FIRST. */
export function ensureLimit(validated: Extract<Validation, { ok: true }>, limit: number): string {
  return validated.hasLimit ? validated.sql : `${validated.sql}\nLIMIT ${limit}`;
}

function outerLimit(statement: Node): boolean {
  const root = statement.children?.[0]; // RootQueryContext
  const query = root?.children?.find((n) => n.constructor.name === 'QueryStatementContext');
  const body = query?.children?.find((n) => n.constructor.name === 'QueryNoWithContext');
  return (body?.children ?? []).some((n) => !!n.symbol && /^(LIMIT|FETCH)$/i.test(n.getText()));
}

function walk(node: Node, visit: (n: Node) => void): void {
  visit(node);
  for (const child of node.children ?? []) walk(child, visit);
}

function describe(node: Node | undefined): string {
  const name = node?.constructor.name.replace(/Context$/, '') ?? 'unknown';
  return `a ${name.replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase()} statement`;
}

/** The base tables a validated statement reads, fully qualified with the defaults; CTE names are not tables. */
export function tablesOf(sql: string, defaults: { catalog: string; schema: string }): string[] {
  const tree = parser.parse(sql) as unknown as Node;
  const ctes = new Set<string>();
  const tables = new Set<string>();
  const names = (n: Node): string[] => {
    const out: string[] = [];
    const visit = (x: Node) => {
      if (/^(Unquoted|Quoted|BackQuoted|Digit)IdentifierContext$/.test(x.constructor.name)) {
        const t = x.getText();
        out.push(t.startsWith('"') ? t.slice(1, -1).replace(/""/g, '"').toLowerCase() : t.toLowerCase());
      } else (x.children ?? []).forEach(visit);
    };
    visit(n);
    return out;
  };
  walk(tree, (n) => {
    if (n.constructor.name === 'NamedQueryContext') {
      const id = (n.children ?? []).find((c) => /IdentifierContext$/.test(c.constructor.name));
      if (id) ctes.add(names(id)[0]!);
    }
  });
  walk(tree, (n) => {
    if (n.constructor.name !== 'TableNameContext') return;
    const parts = names(n);
    if (parts.length === 1 && ctes.has(parts[0]!)) return;
    const full = parts.length >= 3 ? parts.slice(-3) : parts.length === 2 ? [defaults.catalog, ...parts] : [defaults.catalog, defaults.schema, ...parts];
    tables.add(full.join('.'));
  });
  return [...tables].sort();
}
