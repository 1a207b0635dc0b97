import { Agent, request } from 'node:https';
import { Trino, type QueryError, type QueryResult } from 'trino-client';
import { CONNECTORS_WITH_SCAN_STATISTICS, parseShowStats, scanBoundOf } from './trino-stats.ts';
import {
  EngineError,
  rowBytes,
  tooLarge,
  type CatalogColumn,
  type EngineCaller,
  type EngineColumn,
  type EngineResult,
  type QueryEngine,
  unapprovedRead,
} from './types.ts';

// The Trino engine. Every user statement runs with the caller's own token and name, so the row filters and column
// masks configured in Trino apply; the service's own metadata queries (catalog scans, cost estimates) run as the
// configured service user. One client per request: trino-client mutates its headers as a query runs.

export type TrinoSettings = {
  url: string;
  /** PEM of the CA that signed Trino's certificate, when it is not a public one. */
  ca?: string | undefined;
  serviceUser: string;
  serviceToken?: string | undefined;
  /** Time limit for the service's own metadata queries. */
  metadataTimeoutMs: number;
};

type Identity = { user: string; token: string };

export function createTrinoEngine(settings: TrinoSettings): QueryEngine {
  const service = (): Identity => {
    if (!settings.serviceToken)
      throw new EngineError(
        'unavailable',
        'SVC_TRINO_SERVICE_TOKEN is not set, so the service cannot read metadata or estimate costs in Trino.',
      );
    return { user: settings.serviceUser, token: settings.serviceToken };
  };
  const asService = (sql: string) =>
    runStatement(settings, sql, service(), settings.metadataTimeoutMs).catch((err: unknown) => {
      // the caller did nothing wrong when the service's own credentials are refused
      if (err instanceof EngineError && err.kind === 'unauthenticated')
        throw new EngineError('unavailable', `Trino refused the service user ${settings.serviceUser}'s token (SVC_TRINO_SERVICE_TOKEN).`);
      throw err;
    });

  // The IO plan of a statement, as the service user: the cost gate reads its estimate and execution its input
  // tables, so one round trip serves both, and a statement asked again within PLAN_TTL_MS pays none.
  const plans = new Map<string, { at: number; plan: Promise<string> }>();
  const ioPlan = (sql: string): Promise<string> => {
    const hit = plans.get(sql);
    if (hit && Date.now() - hit.at < PLAN_TTL_MS) return hit.plan;
    const plan = asService(`EXPLAIN (TYPE IO, FORMAT JSON) ${sql}`).then(({ rows }) => String(rows[0]?.[0] ?? ''));
    plan.catch(() => plans.get(sql)?.plan === plan && plans.delete(sql)); // a failure is not kept
    if (plans.size >= MAX_PLANS) plans.clear(); // a bound on the cache itself; plans come back on demand
    plans.set(sql, { at: Date.now(), plan });
    return plan;
  };

  return {
    kind: 'trino',
    async columns(catalogs) {
      const present = new Set((await asService('SHOW CATALOGS')).rows.map((r) => String(r[0]).toLowerCase()));
      const out: CatalogColumn[] = [];
      for (const catalog of catalogs.map((c) => c.toLowerCase()).filter((c) => present.has(c))) {
        const { rows } = await asService(
          `SELECT table_schema, table_name, column_name, data_type FROM ${quote(catalog)}.information_schema.columns ` +
            `WHERE table_schema <> 'information_schema' ORDER BY table_schema, table_name, ordinal_position`,
        );
        for (const [schema, table, column, type] of rows as string[][])
          out.push({ catalog, schema: schema!, table: table!, column: column!, type: type! });
      }
      return out;
    },
    async estimateBytes(sql) {
      return bytesRead(await ioPlan(sql));
    },
    async scanBound(table) {
      const parts = table.split('.');
      if (parts.length !== 3) return undefined;
      const [catalog, schema, name] = parts as [string, string, string];
      // a table Trino does not know (or will not show the service user) has no bound; the EXPLAIN says why
      const refused = (err: unknown) => {
        if (err instanceof EngineError && (err.kind === 'invalid' || err.kind === 'forbidden')) return undefined;
        throw err;
      };
      // the catalog's connector and the table's column types in one statement, its statistics in another
      const [columns, stats] = await Promise.all(
        [
          asService(
            `SELECT k.connector_name, c.column_name, c.data_type FROM system.metadata.catalogs k ` +
              `JOIN ${quote(catalog)}.information_schema.columns c ON c.table_schema = ${literal(schema)} AND c.table_name = ${literal(name)} ` +
              `WHERE k.catalog_name = ${literal(catalog)}`,
          ),
          asService(`SHOW STATS FOR ${[catalog, schema, name].map(quote).join('.')}`),
        ].map((p) => p.catch(refused)),
      );
      if (!columns || !stats) return undefined;
      const rows = columns.rows as string[][];
      if (rows.length === 0 || !rows.every((r) => CONNECTORS_WITH_SCAN_STATISTICS.has(String(r[0])))) return undefined;
      return scanBoundOf(
        rows.map(([, column, type]) => ({ column: column!, type: type! })),
        parseShowStats(stats.rows),
      );
    },
    async execute(sql, caller, opts) {
      const who = callerIdentity(caller);
      const unapproved = relationsRead(await ioPlan(sql)).find((r) => !opts.reads.includes(r));
      if (unapproved) throw unapprovedRead(unapproved);
      return runStatement(settings, sql, who, opts.timeoutMs, opts.maxBytes);
    },
    close: async () => {},
  };
}

function callerIdentity(caller: EngineCaller): Identity {
  if (!caller.token)
    throw new EngineError(
      'unauthenticated',
      "The request carries no X-User-Token, and Trino runs every statement with the caller's own token.",
    );
  return { user: caller.user, token: caller.token };
}

const PLAN_TTL_MS = 60_000;
const MAX_PLANS = 1000;

type IoPlan = {
  inputTableColumnInfos?: {
    table?: { catalog?: string; schemaTable?: { schema?: string; table?: string } };
    estimate?: { outputSizeInBytes?: number | string };
  }[];
};

/** The tables an IO plan reads, `catalog.schema.table` in lower case; a table the plan cannot name is `?`. */
export function relationsRead(explainJson: string): string[] {
  const plan = JSON.parse(explainJson) as IoPlan;
  return (plan.inputTableColumnInfos ?? []).map(({ table }) =>
    table?.catalog && table.schemaTable?.schema && table.schemaTable.table
      ? `${table.catalog}.${table.schemaTable.schema}.${table.schemaTable.table}`.toLowerCase()
      : '?',
  );
}

/**
 * The bytes Trino expects to read: the sum of its estimates for every input table. An unknown estimate ("NaN", or
 * no input table listed) is undefined, which the cost gate treats as over the limit.
 */
export function bytesRead(explainJson: string): number | undefined {
  const plan = JSON.parse(explainJson) as IoPlan;
  const inputs = plan.inputTableColumnInfos ?? [];
  if (inputs.length === 0) return undefined;
  let total = 0;
  for (const input of inputs) {
    const bytes = Number(input.estimate?.outputSizeInBytes);
    if (!Number.isFinite(bytes)) return undefined;
    total += bytes;
  }
  return Math.round(total);
}

/**
 * Runs one statement to the end, checking every page for an error; past the time limit, or once the rows read
 * weigh more than `maxBytes`, the query is cancelled.
 */
async function runStatement(
  settings: TrinoSettings,
  sql: string,
  who: Identity,
  timeoutMs: number,
  maxBytes?: number,
): Promise<EngineResult> {
  // trino-client hands `ssl` to the https.Agent it makes per client: kept alive, the statement's POST and every page
  // it polls share one TLS connection instead of a handshake each; the agent is closed when the statement ends
  const ssl = { ...(settings.ca ? { ca: settings.ca } : {}), keepAlive: true };
  const client = Trino.create({
    server: settings.url,
    source: 'svc-explore',
    ssl,
    // X-Trino-User must name the token's subject on every request: the client's default is the OS user.
    extraHeaders: { Authorization: `Bearer ${who.token}`, 'X-Trino-User': who.user },
  });
  let pages: Awaited<ReturnType<Trino['query']>> | undefined;
  let stopped = false;
  const collect = async (): Promise<EngineResult> => {
    pages = await client.query(sql);
    if (stopped) cancel(settings, nextUriOf(pages), who); // the time limit passed during the POST
    let columns: EngineColumn[] | undefined;
    const rows: unknown[][] = [];
    let bytes = 0;
    for (;;) {
      const { value: page, done } = (await pages.next()) as { value: QueryResult; done?: boolean };
      if (stopped) break;
      if (page.error) throw pageError(page.error);
      columns ??= page.columns?.map((c) => ({ name: c.name, type: c.type }));
      if (done) break;
      for (const row of page.data ?? []) {
        if (maxBytes !== undefined && (bytes += rowBytes(row)) > maxBytes) throw tooLarge(maxBytes);
        rows.push(row);
      }
    }
    return { columns: columns ?? [], rows };
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EngineError('timeout', `The query ran longer than ${timeoutMs} ms and was cancelled.`)), timeoutMs);
  });
  const running = collect();
  running.catch(() => undefined); // after a timeout nobody awaits it any more
  try {
    return await Promise.race([running, deadline]);
  } catch (err) {
    throw err instanceof EngineError ? err : transportError(err, settings.url);
  } finally {
    clearTimeout(timer);
    stopped = true;
    if (pages) cancel(settings, nextUriOf(pages), who); // no-op once the query has finished
    agentOf(client)?.destroy();
  }
}

/** The https.Agent trino-client 0.2.9 made for the client (its request config's httpsAgent). */
function agentOf(client: Trino): Agent | undefined {
  return (client as unknown as { client?: { clientConfig?: { httpsAgent?: Agent } } }).client?.clientConfig?.httpsAgent;
}

/**
 * The query's current nextUri. trino-client 0.2.9 keeps polling inside one `next()` until a page carries data, so
 * while a long aggregation runs no page reaches the caller: the position lives only in the iterator's state.
 * Reading it there depends on the pinned version; the cancellation test in tests/integration proves it.
 */
function nextUriOf(pages: unknown): string | undefined {
  return (pages as { iter?: { queryResult?: QueryResult } }).iter?.queryResult?.nextUri;
}

/** Trino's protocol: DELETE on the current nextUri cancels the query. Best effort: the answer is already decided. */
function cancel(settings: TrinoSettings, uri: string | undefined, who: Identity): void {
  if (!uri) return;
  const req = request(uri, {
    method: 'DELETE',
    headers: { Authorization: `Bearer ${who.token}`, 'X-Trino-User': who.user },
    ...(settings.ca ? { agent: new Agent({ ca: settings.ca }) } : {}),
  });
  req.on('response', (res) => res.resume());
  req.on('error', () => {});
  req.end();
}

function pageError(error: QueryError): EngineError {
  const message = error.message;
  if (error.errorName === 'PERMISSION_DENIED') return new EngineError('forbidden', message);
  if (error.errorName === 'USER_CANCELED' || error.errorName === 'EXCEEDED_TIME_LIMIT') return new EngineError('timeout', message);
  if (error.errorType === 'USER_ERROR') return new EngineError('invalid', message);
  return new EngineError('unavailable', `Trino failed the query (${error.errorName}): ${message}`);
}

/** HTTP-level failures: a refused token, or a Trino that cannot be reached or answers with a server error. */
function transportError(err: unknown, url: string): EngineError {
  const e = err as { response?: { status?: number; data?: unknown }; code?: string; message?: string };
  const status = e.response?.status;
  if (status === 401) return new EngineError('unauthenticated', 'Trino refused the token (invalid or expired): sign in again.');
  if (status === 403)
    return new EngineError('forbidden', `Trino refused the request: ${String(e.response?.data ?? 'forbidden').slice(0, 300)}`);
  if (status !== undefined) return new EngineError('unavailable', `Trino answered HTTP ${status}.`);
  return new EngineError('unavailable', `Trino at ${url} cannot be reached (${e.code ?? e.message ?? 'no answer'}).`);
}

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
