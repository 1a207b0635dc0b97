import { TrinoSQL } from 'dt-sql-parser';

// Column lineage for redaction: for each output column of a statement, the base-table columns its values are
// derived from, traced through the parse tree (aliases, expressions and function calls, `*` and `t.*`, subqueries,
// CTEs, set operations, joins). It over-approximates on purpose: an unqualified name that two tables share counts
// as both, and anything it cannot trace is marked unknown, which the redaction treats as personal data.

export type OutputLineage = { name: string; sources: string[]; unknown: boolean };
export type TableSchema = Record<string, readonly string[]>; // 'catalog.schema.table' -> column names
export type Defaults = { catalog: string; schema: string };

type Node = { constructor: { name: string }; children?: Node[] | null; symbol?: unknown; getText(): string };
type Col = { name: string; sources: Set<string>; unknown: boolean };
type Relation = { name: string; fqn?: string; columns: Col[]; open: boolean };
type Scope = { relations: Relation[]; outer?: Scope };
type Env = Map<string, Col[]>;
type Ctx = { schema: TableSchema; defaults: Defaults };

const parser = new TrinoSQL();

const kind = (n: Node | undefined) => n?.constructor.name.replace(/Context$/, '') ?? '';
const kids = (n: Node) => (n.children ?? []).filter((c) => c.children !== undefined && c.children !== null);
const IDENTIFIERS = new Set(['UnquotedIdentifier', 'QuotedIdentifier', 'BackQuotedIdentifier', 'DigitIdentifier']);
const identifierText = (n: Node) => {
  const t = n.getText();
  return t.startsWith('"') ? t.slice(1, -1).replace(/""/g, '"').toLowerCase() : t.toLowerCase();
};
const identifiersIn = (n: Node): string[] => {
  const out: string[] = [];
  const visit = (x: Node) => (IDENTIFIERS.has(kind(x)) ? out.push(identifierText(x)) : kids(x).forEach(visit));
  visit(n);
  return out;
};
function findFirst(n: Node, names: Set<string>): Node | undefined {
  for (const c of kids(n)) {
    if (names.has(kind(c))) return c;
    const deeper = findFirst(c, names);
    if (deeper) return deeper;
  }
  return undefined;
}
const col = (name: string, sources: Iterable<string> = [], unknown = false): Col => ({ name, sources: new Set(sources), unknown });

export function outputLineage(sql: string, schema: TableSchema, defaults: Defaults): OutputLineage[] {
  const tree = parser.parse(sql) as unknown as Node;
  const statement = findFirst(tree, new Set(['QueryStatement']));
  if (!statement) return [];
  const lowered: TableSchema = Object.fromEntries(Object.entries(schema).map(([t, cs]) => [t.toLowerCase(), cs.map((c) => c.toLowerCase())]));
  const cols = queryStatement(statement, new Map(), undefined, { schema: lowered, defaults });
  return cols.map((c) => ({ name: c.name, sources: [...c.sources].sort(), unknown: c.unknown }));
}

function queryStatement(n: Node, env: Env, outer: Scope | undefined, ctx: Ctx): Col[] {
  const local: Env = new Map(env);
  const withClause = kids(n).find((c) => kind(c) === 'With');
  for (const named of withClause ? kids(withClause).filter((c) => kind(c) === 'NamedQuery') : []) {
    const parts = kids(named);
    const name = identifierText(parts.find((c) => IDENTIFIERS.has(kind(c)))!);
    const aliases = parts.find((c) => kind(c) === 'ColumnAliases');
    const inner = parts.find((c) => kind(c) === 'QueryStatement')!;
    local.set(name, renamed(queryStatement(inner, local, outer, ctx), aliases));
  }
  const body = kids(n).find((c) => kind(c) === 'QueryNoWith');
  return body ? term(body, local, outer, ctx) : [];
}

function term(n: Node, env: Env, outer: Scope | undefined, ctx: Ctx): Col[] {
  switch (kind(n)) {
    case 'QuerySpecification':
      return specification(n, env, outer, ctx);
    case 'QueryStatement':
      return queryStatement(n, env, outer, ctx);
    case 'SetOperation': {
      const [left, right] = kids(n).filter((c) => kind(c) !== 'SetQuantifier');
      const a = left ? term(left, env, outer, ctx) : [];
      const b = right ? term(right, env, outer, ctx) : [];
      return a.map((c, i) => col(c.name, [...c.sources, ...(b[i]?.sources ?? [])], c.unknown || !b[i] || b[i]!.unknown || a.length !== b.length));
    }
    case 'InlineTable': {
      const first = findFirst(n, new Set(['RowConstructor']));
      const scope: Scope = { relations: [], ...(outer ? { outer } : {}) };
      const values = first ? kids(first).filter((c) => kind(c) !== 'Terminal') : kids(n).slice(0, 1);
      return values.map((v, i) => expression(v, `_col${i}`, scope, env, ctx));
    }
    default: {
      const inner = kids(n)[0];
      return inner ? term(inner, env, outer, ctx) : [];
    }
  }
}

function specification(n: Node, env: Env, outer: Scope | undefined, ctx: Ctx): Col[] {
  const scope: Scope = { relations: [], ...(outer ? { outer } : {}) };
  const gather = (x: Node) => {
    for (const c of kids(x)) {
      const k = kind(c);
      if (k === 'AliasedRelation') scope.relations.push(relation(c, env, scope, ctx));
      else if (!['SelectList', 'WhereClause', 'GroupBy', 'HavingClause', 'WindowDefinition'].includes(k)) gather(c);
    }
  };
  gather(n);
  const items = findFirst(n, new Set(['SelectList']));
  const out: Col[] = [];
  for (const item of items ? kids(items).filter((c) => kind(c) === 'SelectItem') : []) {
    const inner = kids(item)[0]!;
    switch (kind(inner)) {
      case 'SelectAllWithoutTable':
        for (const r of scope.relations) out.push(...(r.open ? [col('*', [], true)] : r.columns));
        break;
      case 'TableAllColumns': {
        const qualifier = identifiersIn(inner).join('.');
        const r = findRelation(scope, qualifier);
        out.push(...(!r ? [col(`${qualifier}.*`, [], true)] : r.open ? [col('*', [], true)] : r.columns));
        break;
      }
      default: {
        const expr = kids(inner)[0];
        const alias = kids(item).slice(1).find((c) => IDENTIFIERS.has(kind(c)));
        const refName = kind(expr) === 'ColumnRef' ? identifiersIn(expr!).at(-1) : undefined;
        out.push(expression(expr!, alias ? identifierText(alias) : (refName ?? `_col${out.length}`), scope, env, ctx));
      }
    }
  }
  return out;
}

function relation(n: Node, env: Env, scope: Scope, ctx: Ctx): Relation {
  const parts = kids(n);
  const alias = parts.find((c) => IDENTIFIERS.has(kind(c)));
  const aliases = parts.find((c) => kind(c) === 'ColumnAliases');
  const table = findFirst(n, new Set(['TableName', 'SubqueryRelation']));
  let r: Relation;
  if (table && kind(table) === 'TableName') {
    const names = identifiersIn(table);
    const cte = names.length === 1 ? env.get(names[0]!) : undefined;
    if (cte) r = { name: names[0]!, columns: cte, open: false };
    else {
      const fqn = qualify(names, ctx.defaults);
      const known = ctx.schema[fqn];
      r = { name: names.at(-1)!, fqn, columns: (known ?? []).map((c) => col(c, [`${fqn}.${c}`])), open: !known };
    }
  } else if (table) {
    const inner = findFirst(table, new Set(['QueryStatement']))!;
    r = { name: '', columns: queryStatement(inner, env, scope.outer, ctx), open: false };
  } else {
    // UNNEST, LATERAL and the like: every column it yields may carry anything it refers to
    const carried = expression(parts[0]!, '', scope, env, ctx);
    const names = aliases ? identifiersIn(aliases) : [];
    r = { name: '', columns: names.map((c) => col(c, carried.sources, carried.unknown)), open: names.length === 0 };
  }
  if (alias) r.name = identifierText(alias);
  if (aliases && r.columns.length > 0) r.columns = renamed(r.columns, aliases);
  return r;
}

function expression(n: Node, name: string, scope: Scope, env: Env, ctx: Ctx): Col {
  const out = col(name);
  const visit = (x: Node) => {
    const k = kind(x);
    if (k === 'QueryStatement') {
      for (const c of queryStatement(x, env, scope, ctx)) absorb(out, c);
    } else if (k === 'ColumnRef' || k === 'ColumnReference') {
      absorb(out, reference(identifiersIn(x), scope));
    } else kids(x).forEach(visit);
  };
  if (kind(n) === 'ColumnRef' || kind(n) === 'ColumnReference') absorb(out, reference(identifiersIn(n), scope));
  else visit(n);
  return out;
}

function reference(parts: string[], scope: Scope): Col {
  const column = parts.at(-1)!;
  for (let s: Scope | undefined = scope; s; s = s.outer) {
    if (parts.length > 1) {
      const r = findRelation(s, parts.slice(0, -1).join('.'));
      if (r) return lookup(r, column) ?? col(column, [], true);
      // `x.field` where x is a column of ROW type
      const base = reference([parts[0]!], s);
      if (!base.unknown || base.sources.size > 0) return base;
      continue;
    }
    const found = s.relations.map((r) => lookup(r, column)).filter((c): c is Col => !!c);
    if (found.length > 0) return found.reduce((acc, c) => (absorb(acc, c), acc), col(column));
  }
  return col(column, [], true);
}

function lookup(r: Relation, column: string): Col | undefined {
  const c = r.columns.find((x) => x.name === column);
  if (c) return c;
  if (r.open) return r.fqn ? col(column, [`${r.fqn}.${column}`]) : col(column, [], true);
  return undefined;
}

function findRelation(scope: Scope, qualifier: string): Relation | undefined {
  return scope.relations.find((r) => r.name === qualifier || r.fqn === qualifier || (r.fqn?.endsWith(`.${qualifier}`) ?? false));
}

function absorb(into: Col, from: Col): void {
  for (const s of from.sources) into.sources.add(s);
  if (from.unknown) into.unknown = true;
}

function renamed(cols: Col[], aliases: Node | undefined): Col[] {
  if (!aliases) return cols;
  const names = identifiersIn(aliases);
  return cols.map((c, i) => ({ ...c, name: names[i] ?? c.name }));
}

function qualify(parts: string[], d: Defaults): string {
  if (parts.length >= 3) return parts.slice(-3).join('.');
  if (parts.length === 2) return `${d.catalog}.${parts.join('.')}`;
  return `${d.catalog}.${d.schema}.${parts[0]}`;
}
