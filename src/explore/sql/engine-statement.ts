import type { TableRefContext, ViewRefContext } from 'dt-sql-parser/dist/lib/trino/TrinoSqlParser';
import type { Edit } from './edits.ts';
import { limitEdits, withLimit } from './limit.ts';
import { stringIndex } from './parse.ts';
import type { ParsedStatement } from './statement.ts';
import { relationReferences, type Defaults } from './tables.ts';
import { is, nameOf, walk, type Node } from './tree.ts';

// The statement the engine runs, printed from the validated tree: never the model's words where a relation is
// named. Two engines' grammars can read one text differently (`FROM ONLY customer` is the table `only` aliased
// `customer` to Trino's grammar, and the table `customer` to Postgres), so every relation the validator resolved
// is printed as what it resolved to:
// - a base table as its quoted three-part name, `"tpch"."tiny"."customer"`: no engine can read a keyword, a search
//   path (Postgres finds `pg_stats` in pg_catalog first) or a default schema into it;
// - a WITH query's name, where it is defined and where it is read, quoted: `"only"` is a name to every grammar;
// - a table with personal columns, for a caller who may not see them, as a projection that puts the mask in
//   place of each personal column before anything else reads it, as Trino's column masks do: WHERE, JOIN, GROUP
//   BY, ORDER BY and every function then only ever see the mask.

/** Per table (`catalog.schema.table`): its columns in order and those that hold personal data. */
export type TableMasks = ReadonlyMap<string, { columns: readonly string[]; personal: ReadonlySet<string> }>;

export type EngineStatementOptions = {
  defaults: Defaults;
  /** The automatic LIMIT (limit.ts). */
  limit: number;
  /** Tables to read through their mask; empty for a caller who sees personal data. */
  masks: TableMasks;
  /** What a masked value reads as (SVC_PII_REDACTION). */
  replacement: string;
};

export function engineStatement(statement: ParsedStatement, opts: EngineStatementOptions): string {
  const at = stringIndex(statement.sql);
  const span: Span = (node) => ({
    from: at(node.start!.start),
    to: at(node.stop!.stop + 1),
  });
  const edits: Edit[] = [];
  walk(statement.query, (n: Node) => {
    if (is(n, 'NamedQuery')) edits.push({ ...span(n.identifier()), text: quoted(nameOf(n.identifier())) });
  });
  for (const reference of relationReferences(statement, opts.defaults)) {
    if ('cte' in reference) {
      edits.push({ ...span(reference.ref), text: quoted(reference.cte) });
      continue;
    }
    const mask = opts.masks.get(reference.table);
    const name = reference.table.split('.').map(quoted).join('.');
    if (!mask) edits.push({ ...span(reference.ref), text: name });
    else edits.push(maskedRead(reference.ref, maskOf(mask, name, opts.replacement), reference.table, span));
  }
  return withLimit(statement.sql, limitEdits(statement, opts.limit), edits);
}

/** `(SELECT c1, <mask> AS c2, ... FROM table)`: every column in the table's order, personal ones masked. */
function maskOf(mask: { columns: readonly string[]; personal: ReadonlySet<string> }, table: string, replacement: string): string {
  const value = `'${replacement.replaceAll("'", "''")}'`;
  const columns = mask.columns.map((c) =>
    mask.personal.has(c) ? `CASE WHEN ${quoted(c)} IS NULL THEN NULL ELSE ${value} END AS ${quoted(c)}` : quoted(c),
  );
  return `(SELECT ${columns.join(', ')} FROM ${table})`;
}

/**
 * The edit that reads a table through its mask. In a FROM clause the projection takes the name's place and keeps
 * the alias written after it, or is named like the table; `TABLE t` becomes a query over the projection.
 */
function maskedRead(ref: TableRefContext | ViewRefContext, projection: string, table: string, span: Span): Edit {
  const own = quoted(table.split('.').at(-1)!);
  const parent = (ref as unknown as Node).parent;
  if (is(parent, 'Table')) return { ...span(parent), text: `(SELECT * FROM ${projection} AS ${own})` };
  const aliased = parent?.parent?.parent; // tableRef < tableOrViewName < TableName < AliasedRelation
  const hasAlias = is(aliased, 'AliasedRelation') && !!aliased.identifier();
  return { ...span(ref), text: hasAlias ? projection : `${projection} AS ${own}` };
}

type Span = (node: { start: { start: number } | null; stop: { stop: number } | null }) => { from: number; to: number };

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
