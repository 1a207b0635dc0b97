import { forbidden, payloadTooLarge, unprocessable } from '../platform/errors.ts';
import type { Caller } from '../platform/identity.ts';
import type { Logger } from '../platform/log.ts';
import { cacheKey } from './cache.ts';
import { piiColumns, searchCatalog, type CatalogEntry } from './catalog.ts';
import { publishDashboard } from './dashboards/publish.ts';
import type { ExploreDeps } from './deps.ts';
import type { EngineResult } from './engines/types.ts';
import { emit, type EventContext, type Trail } from './events.ts';
import { generateSql, type Generated } from './generate.ts';
import { bypassesRedaction, redactRows } from './redact.ts';
import {
  engineStatement,
  ensureLimit,
  isSystemRelation,
  outputLineage,
  tablesOf,
  validateStatement,
  type ParsedStatement,
  type TableMasks,
} from './sql/index.ts';
import * as store from './store.ts';
import { inSpan, tracer } from '../platform/tracing.ts';
import type { QueryRequest, QueryResponse } from './answer.ts';

// POST /query: the specification's ten steps, in their fixed order, each a named function below.
type Run = { deps: ExploreDeps; caller: Caller; request: QueryRequest; events: EventContext; model: string };

/** Where an unqualified table name points. */
export const DEFAULTS = { catalog: 'tpch', schema: 'tiny' };
const PREVIEW_ROWS = 100;

export async function runQuery(
  deps: ExploreDeps,
  caller: Caller,
  request: QueryRequest,
  ctx: { requestId: string; log: Logger; trail?: Trail },
): Promise<QueryResponse> {
  const events: EventContext = {
    log: ctx.log,
    requestId: ctx.requestId,
    user: caller.user,
    role: caller.roles.join(','),
    trail: ctx.trail,
  };
  emit(events, 'explore_query_received', { question: request.question, session_id: request.session_id });
  const run: Run = { deps, caller, request, events, model: await deps.models.resolve(request.model) };

  const cached = await step('cache', () => lookupCache(run)); //                                  1
  if (cached) return cached;
  const entries = await deps.catalog();
  const candidates = await step('catalog', () => findCandidateTables(run, entries)); //              2
  const allowed = await step('policy', () => allowedTables(run, candidates)); //                    3
  await deps.limiter.charge(caller, 'explore.question'); // a question over the caller's limit never reaches the model
  const generated = await step('generate', () => generateStatement(run, allowed)); //              4
  const validated = await step('validate', () => validateGenerated(run, generated, allowed, entries)); // 5
  const cost = await step('cost', () => gateCost(run, validated)); //                               6
  const reasoning = {
    intent: generated.intent,
    // a denied candidate leaves silently (step 3): the answer never names a table the caller may not read
    candidate_tables: allowed.map((t) => t.fqn),
    allowed_tables: allowed.map((t) => t.fqn),
    tables_used: validated.tables,
  };
  if (!request.execute) return dryRun(run, validated.sql, cost, reasoning);
  await deps.limiter.charge(caller, 'explore.trino_bytes', cost ?? 0); // what the engine estimates it will read
  const result = await step('execute', () => executeStatement(run, validated)); //                 7
  const redacted = await step('redact', () => redactResult(run, validated.statement, result, entries)); // 8
  const dashboard = await step('publish', () => publish(run, validated.sql, result, redacted)); //  9
  return step('remember', () =>
    remember(run, {
      //                                                 10
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
    }),
  );
}

/** 1. The same question from the same user, role and model within the TTL is answered from the cache. */
function lookupCache(run: Run): QueryResponse | undefined {
  if (run.request.force || !run.request.execute) return undefined;
  const hit = run.deps.cache.get(keyOf(run));
  if (!hit) return undefined;
  emit(run.events, 'explore_cache_hit');
  return { ...hit, cached: true };
}

/** 2. The catalog's best tables for the question; when the search finds nothing, every table of the fallback catalogs. */
function findCandidateTables(run: Run, entries: CatalogEntry[]): CatalogEntry[] {
  const found = searchCatalog(entries, run.request.question).map((r) => r.entry);
  return found.length > 0 ? found : entries;
}

/** 3. One policy decision per candidate; denied tables leave the model's context silently. */
async function allowedTables(run: Run, candidates: CatalogEntry[]): Promise<CatalogEntry[]> {
  const decisions = await Promise.all(candidates.map((t) => decideTable(run, t.fqn)));
  candidates.forEach((t, i) => {
    if (!decisions[i]!.allow) emit(run.events, 'explore_policy_denied', { table: t.fqn, reason: decisions[i]!.reason });
  });
  const allowed = candidates.filter((_, i) => decisions[i]!.allow);
  if (allowed.length === 0) {
    emit(run.events, 'explore_no_tables');
    throw forbidden('None of the tables this question needs is open to you; ask an administrator for access.');
  }
  return allowed;
}

/** 4. The language model (or the offline planner) writes the statement from the allowed tables and the history. */
async function generateStatement(run: Run, allowed: CatalogEntry[]): Promise<Generated> {
  const history = run.request.session_id
    ? await store.recentTurns(run.deps.db, run.caller.user, run.request.session_id, run.deps.config.SESSION_TTL, 3)
    : [];
  const generated = await generateSql({ chat: run.deps.chat, model: run.model, question: run.request.question, tables: allowed, history });
  emit(run.events, 'explore_sql_generated', { sql: generated.sql, model: run.model });
  return generated;
}

type Validated = {
  /** The statement as the caller reads it: the canonical text with its LIMIT. */
  sql: string;
  /** The statement the engine runs, printed from the validated tree with the caller's masks (engine-statement.ts). */
  engineSql: string;
  tables: string[];
  statement: ParsedStatement;
};

/**
 * 5. One read statement in Trino's dialect, over allowed tables only, with a LIMIT; no catalog or system relation.
 * The engine gets it printed from the tree, every relation named as validation resolved it and every personal
 * column the caller may not see masked where it is read.
 */
async function validateGenerated(run: Run, generated: Generated, allowed: CatalogEntry[], entries: CatalogEntry[]): Promise<Validated> {
  const validation = validateStatement(generated.sql);
  if (!validation.ok) throw unprocessable(`The generated SQL was rejected: ${validation.reason}`, { sql: generated.sql });
  const { statement } = validation;
  const tables = tablesOf(statement, DEFAULTS);
  const system = tables.find(isSystemRelation);
  if (system) {
    emit(run.events, 'explore_policy_denied', { table: system, reason: 'catalog or system relation' });
    throw forbidden(`The generated SQL reads ${system}, a catalog or system relation: those are never open to queries.`);
  }
  const open = new Set(allowed.map((t) => t.fqn));
  for (const table of tables.filter((t) => !open.has(t))) {
    const decision = await decideTable(run, table);
    if (!decision.allow) {
      emit(run.events, 'explore_policy_denied', { table, reason: decision.reason });
      throw forbidden(`The generated SQL reads ${table}, which is not open to you.`);
    }
  }
  const { SQL_AUTO_LIMIT, PII_REDACTION, PII_BYPASS_ROLES } = run.deps.config;
  const masks = bypassesRedaction(run.caller.roles, PII_BYPASS_ROLES) ? NO_MASKS : tableMasks(entries);
  return {
    sql: ensureLimit(statement.sql, statement, SQL_AUTO_LIMIT),
    engineSql: engineStatement(statement, { defaults: DEFAULTS, limit: SQL_AUTO_LIMIT, masks, replacement: PII_REDACTION }),
    tables,
    statement,
  };
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
function redactResult(run: Run, statement: ParsedStatement, result: EngineResult, entries: CatalogEntry[]) {
  if (bypassesRedaction(run.caller.roles, run.deps.config.PII_BYPASS_ROLES)) return { rows: result.rows, maskedColumns: [] };
  const schema = Object.fromEntries(entries.map((e) => [e.fqn, e.columns.map((c) => c.name)]));
  // The added LIMIT does not change which columns come from where, so the validated statement's lineage holds.
  const lineage = outputLineage(statement, schema, DEFAULTS);
  const redacted = redactRows(result.columns, result.rows, lineage, piiColumns(entries), run.deps.config.PII_REDACTION);
  if (redacted.maskedColumns.length > 0) emit(run.events, 'explore_pii_masked', { columns: redacted.maskedColumns });
  return redacted;
}

/** 9. A signed standalone page with the redacted rows, and its dashboard row owned by the caller. */
async function publish(run: Run, sql: string, result: EngineResult, redacted: { rows: unknown[][]; maskedColumns: string[] }) {
  if (!run.request.persist) return undefined;
  const dashboard = await publishDashboard(
    { db: run.deps.db, pages: run.deps.pages, hmacKey: run.deps.hmacKey, baseUrl: run.deps.config.DASHBOARDS_URL },
    {
      owner: run.caller.user,
      question: run.request.question,
      sql,
      columns: result.columns,
      rows: redacted.rows,
      maskedColumns: redacted.maskedColumns,
      chart: run.request.chart,
    },
  );
  emit(run.events, 'explore_dashboard_published', { dashboard_id: dashboard.id });
  return dashboard;
}

/** 10. The answer goes into the cache and the session's history. */
async function remember(run: Run, response: QueryResponse): Promise<QueryResponse> {
  let size = 0;
  if (run.request.session_id) {
    size = await store.appendTurn(run.deps.db, {
      user: run.caller.user,
      session: run.request.session_id,
      question: run.request.question,
      sql: response.sql,
      summary: response.reasoning.intent,
    });
  }
  const answer = { ...response, session_history_size: size };
  run.deps.cache.set(keyOf(run), answer);
  return answer;
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

const keyOf = (run: Run) =>
  cacheKey({
    question: run.request.question,
    role: [...run.caller.roles].sort().join(','),
    user: run.caller.user,
    model: run.model,
    policy: run.deps.policy.revision,
  });

const decideTable = (run: Run, table: string) =>
  run.deps.policy.decide('tables', { user: run.caller.user, roles: run.caller.roles, table });

const NO_MASKS: TableMasks = new Map();
const masksOfCatalog = new WeakMap<CatalogEntry[], TableMasks>();
/** Each catalog table with personal columns, with its columns in order; built once per catalog read. */
function tableMasks(entries: CatalogEntry[]): TableMasks {
  let masks = masksOfCatalog.get(entries);
  if (!masks) {
    masks = new Map(
      entries
        .filter((e) => e.columns.some((c) => c.tags.includes('pii')))
        .map((e) => [
          e.fqn,
          { columns: e.columns.map((c) => c.name), personal: new Set(e.columns.filter((c) => c.tags.includes('pii')).map((c) => c.name)) },
        ]),
    );
    masksOfCatalog.set(entries, masks);
  }
  return masks;
}
