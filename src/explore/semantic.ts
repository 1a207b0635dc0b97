import { embeddingsOf, type EmbeddingSource } from '../platform/embedded-columns/index.ts';
import { forbidden, unprocessable } from '../platform/errors.ts';
import type { Caller } from '../platform/identity.ts';
import type { CatalogEntry } from './catalog.ts';
import type { ExploreDeps } from './deps.ts';
import { emit, type EventContext } from './events.ts';
import { validateStatement, type Defaults, type ParsedStatement } from './sql/index.ts';
import { rewriteSemantic, semanticCalls, tablesByReference, type SemanticCall } from './sql/semantic.ts';

// Hybrid SQL (docs/explore.md, "Hybrid SQL"), part of step 5: a statement that calls semantic_distance(<column>,
// '<phrase>') is rewritten before anything else looks at it. Each column must have embeddings in a lake collection
// (the platform's registry of embedded columns, written by retrieval's imports) that the collections policy lets the
// caller query; the phrase is embedded with the model that made them; the call becomes cosine_distance over a join
// with the collection's table. The rewritten statement is then validated, decided, masked, costed, run and traced
// like any other: it is the statement.

export type SemanticUse = { table: string; column: string; phrase: string; collection: string; lakeTable: string; model: string };

export type Rewritten = {
  statement: ParsedStatement;
  /** The collections' tables the statement now reads: opened by the collections decision, not the tables one. */
  lakeTables: string[];
  uses: SemanticUse[];
};

type Input = {
  deps: Pick<ExploreDeps, 'db' | 'policy' | 'embedder' | 'engine'>;
  caller: Caller;
  events: EventContext;
  statement: ParsedStatement;
  entries: CatalogEntry[];
  defaults: Defaults;
  /** The caller sees personal columns masked. */
  masked: boolean;
};

/** The statement with every semantic_distance rewritten, or undefined when it calls none. */
export async function rewriteSemanticDistance(input: Input): Promise<Rewritten | undefined> {
  const { deps, statement, entries } = input;
  const byTable = new Map(entries.map((e) => [e.fqn, e]));
  const calls = semanticCalls(statement, input.defaults, (t) => byTable.get(t)?.columns.map((c) => c.name));
  if ('refusal' in calls) throw unprocessable(`The SQL was rejected: ${calls.refusal}`, { sql: statement.sql });
  if (calls.length === 0) return undefined;
  if (deps.engine.kind !== 'trino')
    throw unprocessable(
      'semantic_distance ranks rows by meaning over the embeddings of a lake collection, an Iceberg table on Trino; this explore runs on the embedded engine (SVC_TRINO_URL is not set, or svc dev), which has no lake.',
      { sql: statement.sql },
    );
  const sources = new Map<string, EmbeddingSource>();
  for (const call of calls) {
    const id = `${call.table}.${call.column}`;
    if (!sources.has(id)) sources.set(id, await sourceOf(input, call, byTable.get(call.table)!));
  }
  const phrases = [...new Set(calls.map((c) => c.phrase))];
  const vectors = new Map((await deps.embedder.embed(phrases)).map((v, i) => [phrases[i]!, v]));
  for (const [phrase, vector] of vectors)
    if (vector.every((x) => x === 0))
      throw unprocessable(`The phrase '${phrase}' has no words the embedder reads, so it has no direction to measure a distance to.`);
  const sourceOfCall = (c: SemanticCall) => sources.get(`${c.table}.${c.column}`)!;
  const text = rewriteSemantic(
    statement,
    calls,
    (c) => ({ lakeTable: sourceOfCall(c).lakeTable, documentId: sourceOfCall(c).documentId, keyColumn: sourceOfCall(c).keyColumn }),
    (phrase) => `CAST(json_parse('${JSON.stringify(vectors.get(phrase))}') AS array(double))`,
    tablesByReference(statement, input.defaults),
  );
  if (typeof text !== 'string') throw unprocessable(`The SQL was rejected: ${text.refusal}`, { sql: statement.sql });
  const validation = validateStatement(text);
  // the rewrite prints only what validation allows: a refusal here is a fault of the rewrite, not of the caller
  if (!validation.ok) throw new Error(`the rewrite of semantic_distance does not validate: ${validation.reason}`);
  const uses = calls.map((c) => {
    const s = sourceOfCall(c);
    return { table: c.table, column: c.column, phrase: c.phrase, collection: s.collection, lakeTable: s.lakeTable, model: s.model };
  });
  for (const use of uses) emit(input.events, 'explore_semantic_distance', use);
  return { statement: validation.statement, lakeTables: [...new Set(uses.map((u) => u.lakeTable))].sort(), uses };
}

/**
 * The embeddings of one column the caller may rank by: not personal data the caller sees masked (the order would
 * reveal it), in a collection the policy lets the caller query, made by the model this explore embeds with.
 */
async function sourceOf(input: Input, call: SemanticCall, entry: CatalogEntry): Promise<EmbeddingSource> {
  const { deps, caller } = input;
  const name = `${call.table}.${call.column}`;
  const personal = new Set(entry.columns.filter((c) => c.tags.includes('pii')).map((c) => c.name));
  if (input.masked && personal.has(call.column))
    throw forbidden(
      `semantic_distance(${call.column}, …) would rank rows by the meaning of ${name}, personal data your role sees masked: the order of the rows would reveal what the mask hides. Rank by another column.`,
    );
  const found = await embeddingsOf(deps.db, call.table, call.column);
  if (found.length === 0)
    throw unprocessable(
      `${name} has no embeddings in a lake collection, so semantic_distance cannot rank by it: import it into one first (POST /collections/{slug}/imports with source ${call.table}, text ${call.column} and its key).`,
    );
  for (const source of found) {
    const decision = await deps.policy.decide('collections', {
      user: caller.user,
      roles: caller.roles,
      action: 'query',
      collection: { slug: source.collection, allowed_roles: source.allowedRoles },
    });
    if (!decision.allow) {
      emit(input.events, 'explore_policy_denied', { table: source.lakeTable, collection: source.collection, reason: decision.reason });
      continue;
    }
    if (input.masked && personal.has(source.keyColumn))
      throw forbidden(
        `The embeddings of ${name} are found by ${source.keyColumn}, personal data your role sees masked; semantic_distance cannot join them.`,
      );
    const embedder = deps.embedder;
    if (source.model !== embedder.model || source.dim !== embedder.dim)
      throw unprocessable(
        `The embeddings of ${name} were made by model '${source.model}' (${source.dim} dimensions) and this explore embeds with '${embedder.model}' (${embedder.dim}): a distance between the two means nothing. Give explore retrieval's SVC_EMBED_URL, SVC_EMBED_MODEL and SVC_EMBED_DIM.`,
      );
    return source;
  }
  throw forbidden(`The embeddings of ${name} are in a lake collection you may not query; ask an administrator for access.`);
}
