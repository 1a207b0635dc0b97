import type { AuditedWrite } from '../platform/audit/index.ts';
import { forbidden, payloadTooLarge, unprocessable } from '../platform/errors.ts';
import type { Caller } from '../platform/identity.ts';
import type { Logger } from '../platform/log.ts';
import { cacheKey } from './cache.ts';
import { questionWords, searchCatalog, type CatalogEntry } from './catalog.ts';
import { pageStore } from './dashboards/page-store.ts';
import { prepareDashboard, type PendingDashboard } from './dashboards/publish.ts';
import type { ExploreDeps } from './deps.ts';
import type { EngineResult } from './engines/types.ts';
import { emit, type EventContext, type Trail } from './events.ts';
import { generateSql, tableList, type Generated } from './generate.ts';
import { bypassesRedaction } from '../platform/catalog-tags.ts';
import { redactRows } from './redact.ts';
import { isSystemRelation, tablesOf, validateStatement, type ParsedStatement } from './sql/index.ts';
import { NO_MASKS, tableMasks } from './masks.ts';
import { rewriteSemanticDistance } from './semantic.ts';
import * as store from './store.ts';
import { inRequestTrace, inSpan, tracer } from '../platform/tracing.ts';
import { EDITED_INTENT, EDITED_TURN, type ExportedResult, type QueryRequest, type QueryResponse } from './answer.ts';
import { engineText, limitedText, lineageOf, piiOf, tablesRead } from './statement-derived.ts';

// POST /query: the specification's ten steps, in their fixed order, each a named function below. An edited statement
// (`sql` instead of `question`) skips the catalog search and generation (2 and 4) and the cache lookup (1), and goes
// through every other step as generated SQL does; an export (POST /query/csv) stops after redaction (8).
type Mode = 'answer' | 'export';
type Run = { deps: ExploreDeps; caller: Caller; request: QueryRequest; events: EventContext; model: string; mode: Mode; edited: boolean };
type Context = { requestId: string; log: Logger; trail?: Trail };
/**
 * What an answer leaves to its audit record (questions.ts): the writes that go in the record's own statement (the
 * dashboard's row), and what follows once they are stored (the page's drawing, the cache).
 */
export type Pending = { writes: AuditedWrite[]; done(): void };
export type Answered = { answer: QueryResponse; pending: Pending };
const NOTHING_PENDING: Pending = { writes: [], done: () => {} };

/** Where an unqualified table name points. */
export const DEFAULTS = { catalog: 'tpch', schema: 'tiny' };
const PREVIEW_ROWS = 100;

/** The answer, and the writes its audit record must carry before it is given (Pending). */
export async function runQuery(deps: ExploreDeps, caller: Caller, request: QueryRequest, ctx: Context): Promise<Answered> {
  const outcome = await traced(caller, request, ctx, 'explore.query', async () =>
    pipeline(await startRun(deps, caller, request, ctx, 'answer')),
  );
  if (!('answer' in outcome)) throw new Error('an answer run ended as an export');
  return { answer: outcome.answer, pending: outcome.pending };
}

/** The whole result, redacted as an answer shows it, for POST /query/csv: never cached, published or remembered. */
export async function exportQuery(deps: ExploreDeps, caller: Caller, request: QueryRequest, ctx: Context): Promise<ExportedResult> {
  const outcome = await traced(caller, request, ctx, 'explore.export', async () =>
    pipeline(await startRun(deps, caller, { ...request, execute: true, persist: false }, ctx, 'export')),
  );
  if (!('rows' in outcome)) throw new Error('an export run ended as an answer');
  return outcome.rows;
}

async function startRun(deps: ExploreDeps, caller: Caller, request: QueryRequest, ctx: Context, mode: Mode): Promise<Run> {
  const events: EventContext = {
    log: ctx.log,
    requestId: ctx.requestId,
    user: caller.user,
    role: caller.roles.join(','),
    trail: ctx.trail,
  };
  const edited = request.sql !== undefined;
  emit(events, 'explore_query_received', { question: request.question, sql: request.sql, session_id: request.session_id, mode });
  // no model writes an edited statement: the answer names none
  return { deps, caller, request, events, model: edited ? '' : await deps.models.resolve(request.model), mode, edited };
}

async function pipeline(run: Run): Promise<{ answer: QueryResponse; pending: Pending } | { rows: ExportedResult }> {
  const { deps, caller, request } = run;
  const cached = await step('cache', () => lookupCache(run)); //                                  1
  if (cached) return { answer: cached, pending: NOTHING_PENDING };
  // the session's last turns are read while the policy and the limiter decide (a read: nothing to undo on a refusal)
  const history = readHistory(run);
  const entries = await deps.catalog();
  const candidates = run.edited ? [] : await step('catalog', () => findCandidateTables(run, entries)); //  2
  const access = await step('policy', () => (run.edited ? editedTables(run) : allowedTables(run, candidates))); // 3
  const allowed = access.open;
  if (!run.edited) await deps.limiter.charge(caller, 'explore.question'); // a question over the caller's limit never reaches the model
  const generated = run.edited
    ? { sql: request.sql!, intent: EDITED_INTENT, model: '' }
    : await step('generate', () => generateStatement(run, access, candidates, history)); //            4
  const validated = await step('validate', () => validateGenerated(run, generated, allowed, entries)); // 5
  const cost = await step('cost', () => gateCost(run, validated)); //                               6
  const reasoning = {
    intent: generated.intent,
    // a denied candidate leaves silently (step 3): the answer never names a table the caller may not read
    candidate_tables: run.edited ? validated.tables : allowed,
    allowed_tables: run.edited ? validated.tables : allowed,
    tables_used: validated.tables,
  };
  if (!request.execute) return { answer: dryRun(run, validated.sql, cost, reasoning), pending: NOTHING_PENDING };
  await deps.limiter.charge(caller, 'explore.trino_bytes', cost ?? 0); // what the engine estimates it will read
  const result = await step('execute', () => executeStatement(run, validated)); //                 7
  const redacted = await step('redact', () => redactResult(run, validated, result, entries)); //      8
  if (run.mode === 'export') {
    const rows = redacted.rows.slice(0, deps.config.SQL_AUTO_LIMIT);
    return { rows: { sql: validated.sql, columns: result.columns, rows, masked_columns: redacted.maskedColumns } };
  }
  const dashboard = await step('publish', () => publish(run, validated.sql, result, redacted)); //  9
  const response: QueryResponse = {
    sql: validated.sql,
    columns: result.columns,
    preview_rows: redacted.rows.slice(0, PREVIEW_ROWS),
    row_count: result.rows.length,
    dashboard_url: dashboard?.url ?? null,
    dashboard_id: dashboard?.id ?? null,
    reasoning,
    masked_columns: redacted.maskedColumns,
    cost_bytes: cost ?? null,
    cached: false,
    session_history_size: 0,
    model: run.model,
  };
  return step('remember', () => remember(run, response, dashboard)); //                              10
}

/** 1. The same question from the same user, role and model within the TTL is answered from the cache. */
function lookupCache(run: Run): QueryResponse | undefined {
  // an edited statement is run when asked (the button says "Run"); an export needs every row, the cache keeps 100
  if (run.edited || run.mode === 'export' || run.request.force || !run.request.execute) return undefined;
  const hit = run.deps.cache.get(keyOf(run));
  if (!hit) return undefined;
  emit(run.events, 'explore_cache_hit');
  return { ...hit, cached: true };
}

/** 2. The catalog's best tables for the question; when the search finds nothing, every table of the fallback catalogs. */
function findCandidateTables(run: Run, entries: CatalogEntry[]): CatalogEntry[] {
  const found = searchCatalog(entries, run.request.question ?? '').map((r) => r.entry);
  return found.length > 0 ? found : entries;
}

/** Step 3's outcome: the tables open to the caller, and those the question names by name that are closed to it. */
type Access = { open: string[]; refused: string[] };

/**
 * 3. One policy decision per candidate; denied tables leave the model's context silently. A question whose named
 * tables ("how many suppliers") are all closed to the caller is 403 naming them, as is one with no open candidate:
 * the caller named them, so the refusal tells nothing new (`candidate_tables` of an answer still never names one).
 */
async function allowedTables(run: Run, candidates: CatalogEntry[]): Promise<Access> {
  const decisions = await Promise.all(candidates.map((t) => decideTable(run, t.fqn)));
  candidates.forEach((t, i) => {
    if (!decisions[i]!.allow) emit(run.events, 'explore_policy_denied', { table: t.fqn, reason: decisions[i]!.reason });
  });
  const open = candidates.filter((_, i) => decisions[i]!.allow).map((t) => t.fqn);
  const words = new Set(questionWords(run.request.question ?? ''));
  const named = candidates.filter((t) => words.has(questionWords(t.name)[0] ?? t.name)).map((t) => t.fqn);
  const refused = named.filter((t) => !open.includes(t));
  if (open.length === 0 || (named.length > 0 && refused.length === named.length)) {
    emit(run.events, 'explore_no_tables');
    const which = refused.length > 0 ? `: ${tableList(refused)}` : '';
    throw forbidden(`None of the tables this question needs is open to you${which}; ask an administrator for access.`);
  }
  return { open, refused };
}

/**
 * 3, for an edited statement: one policy decision per table it reads, the first the caller may not read refused (403)
 * by name. A statement that does not parse has no tables yet: step 5 refuses it, saying why. Catalog and system
 * relations are step 5's too, refused whatever the policy says.
 */
async function editedTables(run: Run): Promise<Access> {
  const validation = validateStatement(run.request.sql!);
  if (!validation.ok) return { open: [], refused: [] };
  const tables = tablesOf(validation.statement, DEFAULTS).filter((t) => !isSystemRelation(t));
  const decisions = await Promise.all(tables.map((t) => decideTable(run, t)));
  const denied = tables.findIndex((_, i) => !decisions[i]!.allow);
  if (denied >= 0) {
    emit(run.events, 'explore_policy_denied', { table: tables[denied], reason: decisions[denied]!.reason });
    throw forbidden(`The SQL reads ${tables[denied]}, which is not open to you; ask an administrator for access.`);
  }
  return { open: tables, refused: [] };
}

/** 4. The language model (or the offline planner) writes the statement from the allowed tables and the history. */
async function generateStatement(run: Run, access: Access, candidates: CatalogEntry[], turns: Promise<store.Turn[]>): Promise<Generated> {
  const allowed = candidates.filter((t) => access.open.includes(t.fqn));
  const history = await turns;
  const generated = await generateSql({
    chat: run.deps.chat,
    model: run.model,
    question: run.request.question!,
    tables: allowed,
    history,
    refused: access.refused,
  });
  emit(run.events, 'explore_sql_generated', { sql: generated.sql, model: run.model });
  return generated;
}

type Validated = {
  /** The statement as the caller reads it: the canonical text with its LIMIT. */
  sql: string;
  /** The statement the engine runs, printed from the validated tree with the caller's masks (engine-statement.ts). */
  engineSql: string;
  tables: string[];
  /** The statement the engine runs, parsed: the caller's, or its rewrite when it calls semantic_distance. */
  statement: ParsedStatement;
  /** Lake collections' tables a semantic_distance joined (semantic.ts). */
  lakeTables: string[];
};

/**
 * 5. One read statement in Trino's dialect, over allowed tables only, with a LIMIT; no catalog or system relation.
 * The engine gets it printed from the tree, every relation named as validation resolved it and every personal
 * column the caller may not see masked where it is read.
 */
async function validateGenerated(run: Run, generated: Generated, allowed: string[], entries: CatalogEntry[]): Promise<Validated> {
  const what = run.edited ? 'The SQL' : 'The generated SQL';
  const validation = validateStatement(generated.sql);
  if (!validation.ok) throw unprocessable(`${what} was rejected: ${validation.reason}`, { sql: generated.sql });
  const { SQL_AUTO_LIMIT, PII_REDACTION, PII_BYPASS_ROLES } = run.deps.config;
  const masked = !bypassesRedaction(run.caller.roles, PII_BYPASS_ROLES);
  const written = validation.statement;
  await decideTables(run, what, tablesRead(written, DEFAULTS), allowed);
  const hybrid = await rewriteSemanticDistance({ ...run, statement: written, entries, defaults: DEFAULTS, masked });
  const statement = hybrid?.statement ?? written;
  const tables = tablesRead(statement, DEFAULTS);
  // the rewrite adds only collections' tables, opened by the collections decision semantic.ts took (as retrieval's are)
  if (hybrid) await decideTables(run, what, tables, [...allowed, ...tablesRead(written, DEFAULTS), ...hybrid.lakeTables]);
  const masks = masked ? tableMasks(entries) : NO_MASKS;
  return {
    // the caller reads their own statement; the engine runs the rewrite (docs/explore.md, "Hybrid SQL")
    sql: limitedText(written, SQL_AUTO_LIMIT),
    engineSql: engineText(statement, { defaults: DEFAULTS, limit: SQL_AUTO_LIMIT, masks, replacement: PII_REDACTION }),
    tables,
    statement,
    lakeTables: hybrid?.lakeTables ?? [],
  };
}

/** Step 5's decisions: no catalog or system relation, and the policy's for every table not already open. */
async function decideTables(run: Run, what: string, tables: string[], allowed: readonly string[]) {
  const system = tables.find(isSystemRelation);
  if (system) {
    emit(run.events, 'explore_policy_denied', { table: system, reason: 'catalog or system relation' });
    throw forbidden(`${what} reads ${system}, a catalog or system relation: those are never open to queries.`);
  }
  const open = new Set(allowed);
  for (const table of tables.filter((t) => !open.has(t))) {
    const decision = await decideTable(run, table);
    if (!decision.allow) {
      emit(run.events, 'explore_policy_denied', { table, reason: decision.reason });
      throw forbidden(`${what} reads ${table}, which is not open to you.`);
    }
  }
}

/** 6. The bytes the statement reads (proved from table statistics, or the engine's EXPLAIN) against the limit. */
async function gateCost(run: Run, validated: Validated): Promise<number | undefined> {
  const { COST_GATE, COST_BYTES_LIMIT } = run.deps.config;
  const { bytes: estimate, source } = await run.deps.cost.estimate(validated.statement, validated.engineSql, run.caller.user);
  const over = estimate === undefined || estimate > COST_BYTES_LIMIT;
  emit(run.events, 'explore_cost_gate', {
    cost_bytes: estimate ?? null,
    source,
    limit: COST_BYTES_LIMIT,
    over,
    confirmed: run.request.confirm_cost,
  });
  if (COST_GATE && over && !run.request.confirm_cost) {
    const size = estimate === undefined ? 'an unknown number of bytes' : `about ${estimate} bytes`;
    throw payloadTooLarge(
      `The query would read ${size}, above the limit of ${COST_BYTES_LIMIT} (SVC_COST_BYTES_LIMIT); send it again with confirm_cost=true to run it anyway.`,
      {
        cost_bytes: estimate ?? null,
        sql: validated.sql,
      },
    );
  }
  return estimate;
}

/** 7. The engine runs the statement as the caller, with the caller's token, once its own plan reads only what was validated. */
async function executeStatement(run: Run, validated: Validated): Promise<EngineResult> {
  const { QUERY_TIMEOUT_MS, MAX_RESULT_BYTES } = run.deps.config;
  const result = await run.deps.engine.execute(
    validated.engineSql,
    { user: run.caller.user, token: run.caller.token },
    { timeoutMs: QUERY_TIMEOUT_MS, maxBytes: MAX_RESULT_BYTES, reads: validated.tables },
  );
  emit(run.events, 'explore_engine_executed', { rows: result.rows.length });
  return result;
}

/** 8. Values of personal-data columns are replaced, unless the caller's role may see them. */
function redactResult(run: Run, validated: Validated, result: EngineResult, entries: CatalogEntry[]) {
  if (bypassesRedaction(run.caller.roles, run.deps.config.PII_BYPASS_ROLES)) return { rows: result.rows, maskedColumns: [] };
  const redacted = redactRows(
    result.columns,
    result.rows,
    lineageOf(validated.statement, validated.lakeTables, entries, DEFAULTS),
    piiOf(entries),
    run.deps.config.PII_REDACTION,
  );
  if (redacted.maskedColumns.length > 0) emit(run.events, 'explore_pii_masked', { columns: redacted.maskedColumns });
  return redacted;
}

/** The last turns of the question's session for step 4, when it names one; started early, awaited by step 4. */
function readHistory(run: Run): Promise<store.Turn[]> {
  if (run.edited || !run.request.session_id) return Promise.resolve([]);
  const turns = store.recentTurns(run.deps.db, run.caller.user, run.request.session_id, run.deps.config.SESSION_TTL, 3);
  turns.catch(() => {}); // a refusal before step 4 leaves it unread; step 4 gets its error
  return turns;
}

/**
 * 9. The dashboard row owned by the caller, stored with the question's audit record (one statement: questions.ts);
 * its signed page with the redacted rows is drawn once the row is stored, after the answer.
 */
function publish(run: Run, sql: string, result: EngineResult, redacted: { rows: unknown[][]; maskedColumns: string[] }) {
  if (!run.request.persist) return undefined;
  return prepareDashboard(pageStore(run.deps), {
    owner: run.caller.user,
    // an edited statement's dashboard is titled by its SQL, so a list of dashboards tells them apart
    question: run.request.question ?? `SQL: ${sql.replace(/\s+/g, ' ')}`,
    sql,
    columns: result.columns,
    rows: redacted.rows,
    maskedColumns: redacted.maskedColumns,
    chart: run.request.chart,
  });
}

/**
 * 10. The answer goes into the session's history, and into the cache once it is recorded (with its dashboard's row).
 * An edited statement is a turn of the session (a follow-up question builds on what ran), but not cached: nothing
 * looks it up (step 1).
 */
async function remember(
  run: Run,
  response: QueryResponse,
  dashboard: PendingDashboard | undefined,
): Promise<{ answer: QueryResponse; pending: Pending }> {
  let size = 0;
  if (run.request.session_id) {
    size = await store.appendTurn(run.deps.db, {
      user: run.caller.user,
      session: run.request.session_id,
      question: run.request.question ?? EDITED_TURN,
      sql: response.sql,
      summary: response.reasoning.intent,
    });
  }
  const answer = { ...response, session_history_size: size };
  const done = () => {
    if (dashboard) {
      emit(run.events, 'explore_dashboard_published', { dashboard_id: dashboard.id });
      dashboard.draw();
    }
    if (!run.edited) run.deps.cache.set(keyOf(run), answer);
  };
  return { answer, pending: { writes: dashboard ? [dashboard.insert] : [], done } };
}

function dryRun(run: Run, sql: string, cost: number | undefined, reasoning: QueryResponse['reasoning']): QueryResponse {
  return {
    sql,
    columns: [],
    preview_rows: [],
    row_count: 0,
    dashboard_url: null,
    dashboard_id: null,
    reasoning,
    masked_columns: [],
    cost_bytes: cost ?? null,
    cached: false,
    session_history_size: 0,
    model: run.model,
  };
}

const spans = tracer('explore');
/** Each step is a span when SVC_TRACING_ENABLED=true (a no-op otherwise). */
const step = <T>(name: string, fn: () => T | Promise<T>): Promise<T> => inSpan(spans, `explore.${name}`, async () => fn());

type Outcome = Awaited<ReturnType<typeof pipeline>>;
/**
 * One question (or export) as one trace, filed under the caller. Its outputs are what the caller was told, never a
 * row: the rows, redacted or not, stay out of the trace, so what redaction masks cannot leak through it.
 */
const traced = (caller: Caller, request: QueryRequest, ctx: Context, name: string, fn: () => Promise<Outcome>) =>
  inRequestTrace(
    spans,
    name,
    { user: caller.user, requestId: ctx.requestId, sessionId: request.session_id },
    { question: request.question, sql: request.sql, session_id: request.session_id, model: request.model },
    fn,
    (outcome) =>
      'answer' in outcome
        ? {
            sql: outcome.answer.sql,
            row_count: outcome.answer.row_count,
            masked_columns: outcome.answer.masked_columns,
            dashboard_id: outcome.answer.dashboard_id,
            cached: outcome.answer.cached,
          }
        : { sql: outcome.rows.sql, row_count: outcome.rows.rows.length, masked_columns: outcome.rows.masked_columns },
  );

const keyOf = (run: Run) =>
  cacheKey({
    question: run.request.question ?? '',
    role: [...run.caller.roles].sort().join(','),
    user: run.caller.user,
    model: run.model,
    policy: run.deps.policy.revision,
  });

const decideTable = (run: Run, table: string) =>
  run.deps.policy.decide('tables', { user: run.caller.user, roles: run.caller.roles, table });
