import {
  callerIdentity as trinoCaller,
  explainIo,
  type IoPlan,
  quoteIdent as quote,
  quoteLiteral as literal,
  relationsRead,
  runStatement as runTrino,
  serviceIdentity,
  TrinoError,
  type TrinoIdentity,
} from '../../platform/trino/index.ts';
import { CONNECTORS_WITH_SCAN_STATISTICS, parseShowStats, scanBoundOf } from './trino-stats.ts';
import {
  EngineError,
  rowBytes,
  tooLarge,
  type CatalogColumn,
  type EngineCaller,
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

type Identity = TrinoIdentity;

export function createTrinoEngine(settings: TrinoSettings): QueryEngine {
  const service = (): Identity => {
    try {
      return serviceIdentity(settings, 'read metadata or estimate costs');
    } catch (err) {
      throw engineError(err);
    }
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
    const plan = asService(explainIo(sql)).then(({ rows }) => String(rows[0]?.[0] ?? ''));
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
  try {
    return trinoCaller(caller);
  } catch (err) {
    throw engineError(err);
  }
}

const PLAN_TTL_MS = 60_000;
const MAX_PLANS = 1000;

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
 * Runs one statement to the end (src/platform/trino); once the rows read weigh more than `maxBytes`, the query is
 * cancelled. Trino's errors become the engine's, of the same kind and message.
 */
async function runStatement(
  settings: TrinoSettings,
  sql: string,
  who: Identity,
  timeoutMs: number,
  maxBytes?: number,
): Promise<EngineResult> {
  let bytes = 0;
  const onRow =
    maxBytes === undefined
      ? undefined
      : (row: unknown[]) => {
          if ((bytes += rowBytes(row)) > maxBytes) throw tooLarge(maxBytes);
        };
  try {
    return await runTrino({ url: settings.url, ca: settings.ca, source: 'svc-explore' }, sql, who, {
      timeoutMs,
      ...(onRow ? { onRow } : {}),
    });
  } catch (err) {
    throw engineError(err);
  }
}

/** Trino's refusal as the engine's, of the same kind and message; anything else as it is. */
const engineError = (err: unknown) => (err instanceof TrinoError ? new EngineError(err.kind, err.message) : err);
